/* Prefix sum: each thread scans its own block, stores its total at partial[omp_get_thread_num()+1],
   one thread scans the totals, each thread adds its offset (same static schedule both times). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 200000
#define MAXT 64
static long v[N], partial[MAXT + 1];
int main(void) {
  for (int i = 0; i < N; i++) v[i] = (i * 7919L) % 1000 - 300;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    long run = 0;
#pragma omp for schedule(static)
    for (int i = 0; i < N; i++) { run += v[i]; v[i] = run; }
    partial[t + 1] = run;
#pragma omp barrier
#pragma omp single
    {
      for (int u = 1; u <= omp_get_num_threads(); u++) partial[u] += partial[u - 1];
      printf("prefix: %d threads, total %ld\n", omp_get_num_threads(), partial[omp_get_num_threads()]);
    }
#pragma omp for schedule(static)
    for (int i = 0; i < N; i++) v[i] += partial[t];
    printf("prefix thread %d offset %ld\n", t, partial[t]);
  }
  long chk = 0;
  for (int i = 0; i < N; i += 997) chk += v[i];
  printf("prefix v[N-1] %ld v[N/2] %ld checksum %ld\n", v[N - 1], v[N / 2], chk);
  return 0;
}
