/* Regions in called functions, called from a loop; a region whose body calls a function
 * holding another region (nested at run time: serialized). */
#include <stdio.h>

#define N 600
static int a[N], b[N];

static void scale(int *v, int n, int f) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) v[i] = v[i] * f + i % 7;
}

static int inner_sum(int k) {
  int s = 0;
#pragma omp parallel for
  for (int i = 0; i < 4; i++) b[k * 4 % N + i] += k;
  for (int i = 0; i < 4; i++) s += b[k * 4 % N + i];
  return s;
}

int main(void) {
  for (int i = 0; i < N; i++) a[i] = i;
  for (int round = 0; round < 5; round++) scale(a, N, round % 3 + 1);
  static int sums[N / 4];
#pragma omp parallel for
  for (int k = 0; k < N / 4; k++) sums[k] = inner_sum(k);
  long t = 0, u = 0;
  for (int i = 0; i < N; i++) t += a[i] * (long)(i % 13);
  for (int k = 0; k < N / 4; k++) u += sums[k];
  printf("functions %ld %ld\n", t, u);
  return 0;
}
