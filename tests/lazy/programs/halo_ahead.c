/* --sync=lazy, what a node's working set is (docs/monitor.md, "What a sweep costs and what
 * travels, session 14"): a stencil on rows of 2.5 pages whose halo changes width from sweep to sweep (1, 2 or 3
 * rows of the neighbours' shares), and in some sweeps reads only the first third of the far
 * halo rows. A node's fetches read ahead (1, 2, 4 .. pages) past what it reads; only the pages
 * it surely read travel to it at later sweeps, the others are fetched again when it reads
 * them (a wider halo, a whole row after a third). The sequential part writes words of every
 * share between sweeps (pages several nodes then hold). Prints a checksum and sample values:
 * compared with gcc -fopenmp's output (tests/lazy/CMakeLists.txt, hot_proven_paths.sh).
 *   halo_ahead [SWEEPS]      default 14 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 72
#define M 1280 /* 10240 bytes a row: 2.5 pages */

int main(int argc, char **argv) {
  int sweeps = argc > 1 ? atoi(argv[1]) : 14;
  double *u = malloc(sizeof(double) * N * M), *v = malloc(sizeof(double) * N * M);
  if (!u || !v) return 1;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) u[i * M + j] = v[i * M + j] = (double)((i * 37 + j * 11) % 97) + (j == 0 ? 50.0 : 0.0);
  for (int t = 0; t < sweeps; t++) {
    int w = 1 + t % 3;              /* halo rows on each side */
    int far = t % 4 == 1 ? M / 3 : M; /* columns read in the rows beyond the first */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
      if (i < w || i >= N - w) {
        for (int j = 0; j < M; j++) v[i * M + j] = u[i * M + j];
        continue;
      }
      v[i * M] = u[i * M];
      v[i * M + M - 1] = u[i * M + M - 1];
      for (int j = 1; j < M - 1; j++) {
        double s = u[i * M + j - 1] + u[i * M + j] + u[i * M + j + 1] + u[(i - 1) * M + j] + u[(i + 1) * M + j];
        int n = 5;
        if (j < far)
          for (int d = 2; d <= w; d++) s += u[(i - d) * M + j] + u[(i + d) * M + j], n += 2;
        v[i * M + j] = s / n;
      }
    }
    double *x = u;
    u = v;
    v = x;
    u[(t * 7 % N) * M + t * 131 % M] += 1.0; /* the sequential part writes into some share */
  }
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) s += u[i * M + j] * (double)((i + 3 * j) % 5 + 1);
  printf("halo_ahead sweeps=%d checksum=%.12e\n", sweeps, s);
  for (int i = 0; i < N; i += 9) printf("row %d: %.12e %.12e %.12e\n", i, u[i * M + 1], u[i * M + M / 2], u[i * M + M - 2]);
  free(u);
  free(v);
  return 0;
}
