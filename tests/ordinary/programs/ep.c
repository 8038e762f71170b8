/* NPB-like EP: Gaussian pairs from a linear congruential generator that jumps ahead to each
   batch, counted per annulus in per-thread counters, sums by reduction. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#define BATCHES 64
#define PER 4096
#define MAXT 64
static long q[MAXT][10];
static const uint64_t A = 6364136223846793005ull, Cc = 1442695040888963407ull;
/* the generator's state after n steps from s: (A^n) s + C (A^n - 1)/(A - 1), by squaring */
static uint64_t jump(uint64_t s, uint64_t n) {
  uint64_t a = A, c = Cc, ra = 1, rc = 0;
  while (n) {
    if (n & 1) { ra *= a; rc = rc * a + c; }
    c = c * (a + 1); a *= a; n >>= 1;
  }
  return ra * s + rc;
}
static double next(uint64_t *s) { *s = *s * A + Cc; return (*s >> 11) * (1.0 / 9007199254740992.0); }
int main(void) {
  double sx = 0, sy = 0;
  long pairs = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp for reduction(+:sx, sy, pairs)
    for (int b = 0; b < BATCHES; b++) {
      uint64_t s = jump(271828183ull, (uint64_t)b * PER * 2);
      for (int k = 0; k < PER; k++) {
        double x = 2 * next(&s) - 1, y = 2 * next(&s) - 1, r = x * x + y * y;
        if (r <= 1.0 && r > 0) {
          double f = sqrt(-2.0 * log(r) / r), gx = x * f, gy = y * f;
          int l = (int)fmax(fabs(gx), fabs(gy));
          if (l < 10) q[t][l]++;
          sx += gx; sy += gy; pairs++;
        }
      }
    }
  }
  long total[10] = {0};
  for (int t = 0; t < MAXT; t++) for (int l = 0; l < 10; l++) total[l] += q[t][l];
  printf("ep pairs %ld sx %.6g sy %.6g\n", pairs, sx, sy);
  for (int l = 0; l < 10; l++) if (total[l]) printf("ep annulus %d: %ld\n", l, total[l]);
  return 0;
}
