#include <omp.h>
#include <stdio.h>
double shared_b[1500];
int b_calls;
static int local_k = 11;
void fill_b(int scale) {
  b_calls++;
#pragma omp parallel for schedule(static, 7)
  for (int i = 0; i < 1500; i++) shared_b[i] = i * scale * 0.5 + local_k;
}
void orphan_for(int *dst, int n) {
#pragma omp for
  for (int i = 0; i < n; i++) dst[i] = (int)shared_b[i] % 101;
#pragma omp single
  b_calls += 10;
}
long sum_b(void) { long s = 0; for (int i = 0; i < 1500; i++) s += (long)shared_b[i]; return s; }
