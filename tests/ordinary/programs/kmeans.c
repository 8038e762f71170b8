/* Rodinia-like kmeans: each thread sums its points into its own partial centroids
   (indexed by omp_get_thread_num()), the sequential part combines them. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 20000
#define D 4
#define K 5
#define MAXT 64
#define ITERS 6
static float pts[N][D];
static int member[N];
static double partial[MAXT][K][D];
static int pcount[MAXT][K];
int main(void) {
  float cent[K][D];
  unsigned s = 2024;
  for (int i = 0; i < N; i++)
    for (int d = 0; d < D; d++) { s = s * 1664525u + 1013904223u; pts[i][d] = (s >> 9) % 10000 / 100.0f + (i % K) * 30.0f; }
  for (int k = 0; k < K; k++) for (int d = 0; d < D; d++) cent[k][d] = pts[k * 7][d];
  for (int i = 0; i < N; i++) member[i] = -1;
  int nthreads = 1;
  for (int it = 0; it < ITERS; it++) {
    int delta = 0;
    for (int t = 0; t < MAXT; t++) for (int k = 0; k < K; k++) { pcount[t][k] = 0; for (int d = 0; d < D; d++) partial[t][k][d] = 0; }
#pragma omp parallel
    {
      int t = omp_get_thread_num();
#pragma omp single
      nthreads = omp_get_num_threads();
#pragma omp for reduction(+:delta)
      for (int i = 0; i < N; i++) {
        int b = 0; float bd = 1e30f;
        for (int k = 0; k < K; k++) {
          float dist = 0;
          for (int d = 0; d < D; d++) { float x = pts[i][d] - cent[k][d]; dist += x * x; }
          if (dist < bd) { bd = dist; b = k; }
        }
        if (member[i] != b) { delta++; member[i] = b; }
        pcount[t][b]++;
        for (int d = 0; d < D; d++) partial[t][b][d] += pts[i][d];
      }
    }
    for (int k = 0; k < K; k++) {
      int n = 0; double sum[D] = {0};
      for (int t = 0; t < nthreads; t++) { n += pcount[t][k]; for (int d = 0; d < D; d++) sum[d] += partial[t][k][d]; }
      if (n) for (int d = 0; d < D; d++) cent[k][d] = sum[d] / n;
    }
    printf("kmeans iteration %d: %d points moved\n", it, delta);
  }
  for (int k = 0; k < K; k++) printf("centroid %d: %.5g %.5g %.5g %.5g\n", k, cent[k][0], cent[k][1], cent[k][2], cent[k][3]);
  return 0;
}
