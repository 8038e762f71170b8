/* End-to-end benchmark (scripts/bench-e2e.sh): a 3-D heat equation on an N x N x N grid,
 * ITERS explicit steps of the 7-point stencil, one `parallel for` over the planes per step,
 * the grids swapped by pointer in the sequential part (issue 14's heat3d-like stencil).
 * Every interior value starts non-zero and the faces are held at fixed temperatures.
 * Prints a checksum (the same bits natively, under cape and in heat3d_mpi.c) and, on
 * stderr, the time of the steps.
 *   heat3d [N [ITERS]]      default 160 100 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double initial(int i, int j, int k, int n) {
  if (i == 0 || j == 0 || k == 0) return 100.0;
  if (i == n - 1 || j == n - 1 || k == n - 1) return 10.0;
  return (double)((i * 31 + j * 17 + k * 7) % 101);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 160;
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  if (n < 3 || iters < 1) {
    fprintf(stderr, "heat3d: N must be >= 3 and ITERS >= 1\n");
    return 2;
  }
  long nn = (long)n * n;
  double *u = malloc(sizeof(double) * nn * n), *v = malloc(sizeof(double) * nn * n);
  if (!u || !v) {
    fprintf(stderr, "heat3d: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) u[i * nn + j * n + k] = v[i * nn + j * n + k] = initial(i, j, k, n);

  const double c = 0.1;
  double t0 = omp_get_wtime();
  for (int t = 0; t < iters; t++) {
#pragma omp parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++) {
          long x = i * nn + j * n + k;
          v[x] = u[x] + c * (u[x - nn] + u[x + nn] + u[x - n] + u[x + n] + u[x - 1] + u[x + 1] - 6.0 * u[x]);
        }
    double *w = u;
    u = v;
    v = w;
  }
  double t1 = omp_get_wtime();

  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) s += u[i * nn + j * n + k] * (double)((i + 2 * j + 3 * k) % 7);
  printf("heat3d n=%d iters=%d checksum=%.9e centre=%.9e\n", n, iters, s, u[(n / 2) * nn + (n / 2) * n + n / 2]);
  fprintf(stderr, "bench: seconds %.6f regions %d\n", t1 - t0, iters);
  return 0;
}
