/* Array-section reductions reduction(+:a[0:n]), whole-array reductions,
 * min/max on doubles and ints, a histogram, default(none) with explicit lists. */
#include <omp.h>
#include <stdio.h>
#define N 6000
#define B 16
int v[N];
double d[N];
int main(void) {
  long hist[B] = {0};
  int cnt[B + 4];
  for (int k = 0; k < B + 4; k++) cnt[k] = 1000;
  for (int i = 0; i < N; i++) { v[i] = (i * 7919) % 1013 - 500; d[i] = (i % 97) * 0.25 - 11.0; }
  int imin = 1 << 30, imax = -(1 << 30);
  double dmin = 1e300, dmax = -1e300;
  const int n = N;
#pragma omp parallel for reduction(+: hist[0:B]) reduction(min: imin) reduction(max: imax)
  for (int i = 0; i < N; i++) {
    hist[(v[i] + 500) % B] += 1;
    if (v[i] < imin) imin = v[i];
    if (v[i] > imax) imax = v[i];
  }
#pragma omp parallel default(none) shared(d, cnt) firstprivate(n) reduction(min: dmin) reduction(max: dmax)
  {
#pragma omp for reduction(+: cnt[2:B])
    for (int i = 0; i < n; i++) {
      if (d[i] < dmin) dmin = d[i];
      if (d[i] > dmax) dmax = d[i];
      cnt[2 + i % B] += 2;
    }
  }
  long hs = 0; for (int k = 0; k < B; k++) hs += hist[k] * (k + 1);
  long cs = 0; for (int k = 0; k < B + 4; k++) cs += (long)cnt[k] * (k + 1);
  printf("hs %ld imin %d imax %d dmin %.6g dmax %.6g cs %ld cnt0 %d cnt1 %d cnt18 %d\n", hs, imin, imax, dmin, dmax, cs,
         cnt[0], cnt[1], cnt[18]);
  return 0;
}
