/* Manual work splitting in a plain parallel region: block and cyclic by
 * omp_get_thread_num()/omp_get_num_threads(), per-thread partial[tid] summed
 * after the region, nowait then barrier, several for loops in one region. */
#include <omp.h>
#include <stdio.h>
#define N 10007
#define MAXT 64
double x[N], y[N];
long partial[MAXT];
int owner[N];
int main(void) {
  int nt = 0;
  long cyc[MAXT] = {0};
#pragma omp parallel
  {
    int tid = omp_get_thread_num(), t = omp_get_num_threads();
    if (tid == 0) nt = t;
    int lo = (int)((long)N * tid / t), hi = (int)((long)N * (tid + 1) / t);
    long s = 0;
    for (int i = lo; i < hi; i++) { x[i] = i % 13; owner[i] = tid; s += i % 13; }
    partial[tid] = s;
    for (int i = tid; i < N; i += t) cyc[tid] += (long)i * (i % 3);
#pragma omp barrier
#pragma omp for nowait
    for (int i = 0; i < N; i++) y[i] = x[i] * 2 + 1;
#pragma omp for schedule(static) nowait
    for (int i = 0; i < N; i++) x[i] = x[i] + 0.5;
#pragma omp barrier
#pragma omp for
    for (int i = 1; i < N - 1; i++) owner[i] += (int)(y[i - 1] + y[i + 1]);
#pragma omp for schedule(static, 5)
    for (int i = 0; i < N; i++) y[i] -= x[i];
  }
  long tot = 0, ctot = 0;
  for (int k = 0; k < nt; k++) { tot += partial[k]; ctot += cyc[k]; }
  double sx = 0, sy = 0; long so = 0;
  for (int i = 0; i < N; i++) { sx += x[i]; sy += y[i]; so += owner[i]; }
  printf("nt %d tot %ld ctot %ld sx %.6g sy %.6g so %ld\n", nt, tot, ctot, sx, sy, so);
  for (int k = 0; k < nt; k++) printf("partial[%d] = %ld cyc %ld\n", k, partial[k], cyc[k]);
  return 0;
}
