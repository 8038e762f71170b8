/* End-to-end benchmark (scripts/bench-e2e.sh): power iteration, y = A x then x = y / |y|,
 * ITERS times on an N x N matrix: one `parallel for` over the rows per iteration, the
 * normalisation in the sequential part. Prints the result (the same bits natively, under
 * cape and in matvec_mpi.c) and, on stderr, the time of the iterations.
 *   matvec [N [ITERS]]      default 4096 10 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  int iters = argc > 2 ? atoi(argv[2]) : 10;
  if (n < 1 || iters < 1) {
    fprintf(stderr, "matvec: N and ITERS must be >= 1\n");
    return 2;
  }
  double *a = malloc(sizeof(double) * n * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  if (!a || !x || !y) {
    fprintf(stderr, "matvec: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    x[i] = 1.0;
    for (int j = 0; j < n; j++) a[(long)i * n + j] = (double)((i * 7 + j * 3) % 17) * 0.25 + (i == j);
  }
  double t0 = omp_get_wtime();
  double norm = 0;
  for (int t = 0; t < iters; t++) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += a[(long)i * n + j] * x[j];
      y[i] = s;
    }
    norm = 0;
    for (int i = 0; i < n; i++) norm += y[i] * y[i];
    norm = sqrt(norm);
    for (int i = 0; i < n; i++) x[i] = y[i] / norm;
  }
  double t1 = omp_get_wtime();
  printf("matvec n=%d iters=%d norm=%.12e x0=%.12e xlast=%.12e\n", n, iters, norm, x[0], x[n - 1]);
  fprintf(stderr, "bench: seconds %.6f regions %d\n", t1 - t0, iters);
  return 0;
}
