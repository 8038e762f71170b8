/* MAMULT: the matrix-matrix product the CAPE papers measure (001_3036025dc34c4021.txt
 * Sect. IV, 003_45ed75503520c8f4.txt Sect. VI, 002_2c61c2cb27f62a9a.txt Sect. 5).
 * C = A x B with one `parallel for` over the rows. Prints a checksum of C on stdout (the
 * same bits natively, sequentially, under cape and in mamult_mpi.c) and the compute time on
 * stderr. The papers' matrices are as large as the problem: build with -DMAX_N=N for size N
 * (paper-repro/run.py does), since what CAPE tracks and copies grows with the arrays.
 *   mamult [N]      N <= MAX_N, default 600 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The sequential baseline is this file without -fopenmp: no omp.h, a clock of its own. With
 * OpenMP (and cape-cc) omp_get_wtime(), which cape-cc knows cannot reach a region: the region
 * stays the program's last and its result is not broadcast (docs/translator.md, last_parallel). */
#ifdef _OPENMP
#include <omp.h>
#define now() omp_get_wtime()
#else
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif

#ifndef MAX_N
#define MAX_N 2000
#endif

static double A[MAX_N][MAX_N], B[MAX_N][MAX_N], C[MAX_N][MAX_N];

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 600;
  if (n < 1 || n > MAX_N) {
    fprintf(stderr, "mamult: N must be 1..%d\n", MAX_N);
    return 2;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.5;
      B[i][j] = (double)((i * 5 + j * 11) % 13) * 0.25;
    }

  double t0 = now();
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  double t1 = now();

  double sum = 0, weighted = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      sum += C[i][j];
      weighted += C[i][j] * (double)((i + 2 * j) % 5);
    }
  printf("mamult n=%d sum=%.6f weighted=%.6f c[0][0]=%.3f c[n-1][n-1]=%.3f\n", n, sum, weighted, C[0][0],
         C[n - 1][n - 1]);
  fprintf(stderr, "mamult: compute %.3f s\n", t1 - t0);
  return 0;
}
