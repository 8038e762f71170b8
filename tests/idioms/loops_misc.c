/* Loop forms and control flow people write: continue in a parallel for body,
 * size_t and long indices, <= bounds, steps of 3 and -2, an ordered block
 * printing in order, sections nowait and single nowait before a barrier,
 * a while loop inside the region's for body, a switch in the body. */
#include <omp.h>
#include <stdio.h>
#include <stddef.h>
#define N 2000
int a[N], b[N];
long c[N];
int main(void) {
  int skipped = 0, odd = 0;
#pragma omp parallel for reduction(+: skipped)
  for (size_t i = 0; i < N; i++) {
    if (i % 5 == 0) { skipped++; continue; }
    a[i] = (int)(i * 3 % 17);
  }
#pragma omp parallel for
  for (long i = N - 1; i >= 1; i -= 2) b[i] = (int)(i / 2);
#pragma omp parallel for
  for (int i = 0; i <= N - 3; i += 3) c[i] = (long)i * i;
#pragma omp parallel
  {
#pragma omp sections nowait
    {
#pragma omp section
      a[0] = 99;
#pragma omp section
      b[0] = 77;
    }
#pragma omp single nowait
    c[1] = 5;
#pragma omp barrier
#pragma omp for reduction(+: odd)
    for (int i = 0; i < N; i++) {
      int k = i, steps = 0;
      while (k > 1 && steps < 40) { k = (k % 2) ? 3 * k + 1 : k / 2; steps++; }
      switch (steps % 3) { case 0: c[i] += 1; break; case 1: c[i] += 2; break; default: odd++; }
    }
  }
#pragma omp parallel for ordered schedule(static, 1)
  for (int i = 0; i < 12; i++) {
#pragma omp ordered
    printf("ordered %d a %d b %d\n", i, a[i], b[i]);
  }
  long s = 0; for (int i = 0; i < N; i++) s += a[i] + 3L * b[i] + c[i] % 1000;
  printf("skipped %d odd %d s %ld c1 %ld\n", skipped, odd, s, c[1]);
  return 0;
}
