/* Vector operations (the VECTOR program of 002_2c61c2cb27f62a9a.txt Fig. 8, without the
 * reduction clause: partial sums per thread, added sequentially). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 10000
#define MAXT 64

int main(void) {
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
  double part[MAXT] = {0};
  int nt = 0;
  for (int i = 0; i < N; i++) {
    x[i] = i * 0.5;
    y[i] = (N - i) * 0.25;
  }
#pragma omp parallel for
  for (int i = 0; i < N; i++) z[i] = x[i] + 2.0 * y[i];
#pragma omp parallel for schedule(static, 100)
  for (int i = 0; i < N; i++) x[i] = z[i] * z[i] - y[i];
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp for
    for (int i = 0; i < N; i++) z[i] = x[i] / (1.0 + y[i]);
    double s = 0;
#pragma omp for nowait
    for (int i = 0; i < N; i++) s += z[i];
    part[t] = s;
#pragma omp single
    nt = omp_get_num_threads();
  }
  double dot = 0;
  for (int t = 0; t < nt && t < MAXT; t++) dot += part[t];
  printf("threads %d z[17] %.6f sum %.3f\n", nt, z[17], dot);
  free(x);
  free(y);
  free(z);
  return 0;
}
