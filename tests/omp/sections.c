/* parallel sections (003_45ed75503520c8f4.txt Fig. 3) with more sections than nodes. */
#include <stdio.h>

#define N 4000
static long p1[N], p2[N], p3[N], p4[N];

static void prefix(long *a, int n, int mul) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    s += (long)i * mul % 97;
    a[i] = s;
  }
}

int main(void) {
#pragma omp parallel sections
  {
#pragma omp section
    prefix(p1, N, 3);
#pragma omp section
    prefix(p2, N, 5);
#pragma omp section
    {
      prefix(p3, N, 7);
      p3[0] = -1;
    }
#pragma omp section
    prefix(p4, N, 11);
  }
  printf("sections %ld %ld %ld %ld\n", p1[N - 1], p2[N - 1], p3[N - 1] + p3[0], p4[N / 2]);
  return 0;
}
