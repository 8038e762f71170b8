/* End-to-end benchmark (scripts/bench-e2e.sh): 2-D Jacobi on an N x N grid, ITERS sweeps,
 * one `parallel for` per sweep, the grids swapped by pointer in the sequential part. Every
 * interior value starts non-zero, so every sweep changes every word of the grid.
 * Prints a checksum (the same bits natively, under cape and in jacobi_mpi.c) and, on
 * stderr, the time of the sweeps.
 *   jacobi [N [ITERS]]      default 2000 100 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  if (n < 3 || iters < 1) {
    fprintf(stderr, "jacobi: N must be >= 3 and ITERS >= 1\n");
    return 2;
  }
  double *u = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n * n);
  if (!u || !v) {
    fprintf(stderr, "jacobi: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) u[i * n + j] = v[i * n + j] = (i == 0 || j == 0) ? 100.0 : (double)((i * 31 + j * 17) % 101);

  double t0 = omp_get_wtime();
  for (int t = 0; t < iters; t++) {
#pragma omp parallel for
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    double *w = u;
    u = v;
    v = w;
  }
  double t1 = omp_get_wtime();

  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += u[i * n + j] * (double)((i + 2 * j) % 7);
  printf("jacobi n=%d iters=%d checksum=%.9e centre=%.9e\n", n, iters, s, u[(n / 2) * n + n / 2]);
  fprintf(stderr, "bench: seconds %.6f regions %d\n", t1 - t0, iters);
  return 0;
}
