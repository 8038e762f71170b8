/* End-to-end benchmark (scripts/bench-e2e.sh): a small kernel in many regions. Gradient
 * descent on f(x) = sum (x_i - t_i)^2 + sum (x_{i+1} - x_i)^2 over N unknowns, ITERS steps;
 * each step is one `parallel for` computing the new x from the old, the grids swapped by
 * pointer. Prints the result (the same bits natively, under cape and in gradient_mpi.c) and,
 * on stderr, the time of the steps.
 *   gradient [N [ITERS]]      default 100000 200 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int iters = argc > 2 ? atoi(argv[2]) : 200;
  if (n < 2 || iters < 1) {
    fprintf(stderr, "gradient: N must be >= 2 and ITERS >= 1\n");
    return 2;
  }
  double *x = malloc(sizeof(double) * n), *xn = malloc(sizeof(double) * n), *t = malloc(sizeof(double) * n);
  if (!x || !xn || !t) {
    fprintf(stderr, "gradient: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    x[i] = 0;
    t[i] = (double)((i * 13) % 29) - 14.0;
  }
  const double step = 0.1;
  double t0 = omp_get_wtime();
  for (int k = 0; k < iters; k++) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
      double g = 2 * (x[i] - t[i]);
      if (i > 0) g += 2 * (x[i] - x[i - 1]);
      if (i < n - 1) g -= 2 * (x[i + 1] - x[i]);
      xn[i] = x[i] - step * g;
    }
    double *w = x;
    x = xn;
    xn = w;
  }
  double t1 = omp_get_wtime();
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * (double)(i % 5 + 1);
  printf("gradient n=%d iters=%d checksum=%.12e x0=%.12e\n", n, iters, s, x[0]);
  fprintf(stderr, "bench: seconds %.6f regions %d\n", t1 - t0, iters);
  return 0;
}
