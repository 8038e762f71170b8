/* Every reduction operator of 002_2c61c2cb27f62a9a.txt Table 1 (+ * - & | ^ && || min max)
 * over int, long, float and double, on `parallel for`, on `parallel` and on a `for` inside a
 * region, each starting from a value that is not the operator's identity (so the merged
 * partial results must be applied to the original value).
 * e2e-tolerance: 1e-9  (float and double sums depend on the order the threads' partial
 * results are combined; every other value must agree exactly) */
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void) {
  int ia = 5, is = 10, im = 3, iand = -1, ior = 1 << 29, ixor = 0x5555, iland = 1, ilor = 0,
      imin = 100, imax = 5;
  long la = 7, ls = 11, lm = 2, land = -1, lor = 1L << 62, lxor = 0x1234, lland = 1, llor = 0,
       lmin = 100, lmax = -5;
  float fa = 1.5f, fs = 2.0f, fm = 0.5f, fland = 1.0f, flor = 0.0f, fmin = 1000.0f, fmax = -1000.0f;
  double da = 0.5, ds = 3.0, dm = 0.75, dland = 1.0, dlor = 0.0, dmin = 1e9, dmax = -1e9;
  int i;
#pragma omp parallel for reduction(+: ia, la, fa, da) reduction(-: is, ls, fs, ds) \
    reduction(*: im, lm, fm, dm) reduction(&: iand, land) reduction(|: ior, lor) \
    reduction(^: ixor, lxor) reduction(&&: iland, lland, fland, dland) \
    reduction(||: ilor, llor, flor, dlor) reduction(min: imin, lmin, fmin, dmin) \
    reduction(max: imax, lmax, fmax, dmax)
  for (i = 0; i < N; i++) {
    int v = (i * 37) % 1000 - 300;
    ia += i;
    is -= i;
    if (i % 100 == 0) im *= 2;
    if (i % 97 == 0) iand &= ~(1 << (i / 97));
    ior |= 1 << (i % 29);
    ixor ^= i;
    iland = iland && i != 500;
    ilor = ilor || i == 777;
    if (v < imin) imin = v;
    if (v > imax) imax = v;
    la += (long)i * 100000007L;
    ls -= (long)i * 3;
    if (i % 100 == 0) lm *= 3;
    if (i % 97 == 0) land &= ~(1L << (i / 97 + 40));
    lor |= 1L << (i % 60);
    lxor ^= (long)i << 20;
    lland = lland && i != 3;
    llor = llor || i == 999;
    if ((long)v * 1000000000L < lmin) lmin = (long)v * 1000000000L;
    if ((long)v * 1000000000L > lmax) lmax = (long)v * 1000000000L;
    fa += i * 0.5f;
    fs -= i * 0.25f;
    if (i % 100 == 0) fm *= 1.5f;
    fland = fland && i != 100000;
    flor = flor || i == 0;
    if (v * 0.5f < fmin) fmin = v * 0.5f;
    if (v * 0.5f > fmax) fmax = v * 0.5f;
    da += i * 0.1;
    ds -= i * 0.01;
    if (i % 100 == 0) dm *= 1.25;
    dland = dland && i != 250;
    dlor = dlor || i > 100000;
    if (v * 0.125 < dmin) dmin = v * 0.125;
    if (v * 0.125 > dmax) dmax = v * 0.125;
  }
  printf("int %d %d %d %d %d %d %d %d %d %d\n", ia, is, im, iand, ior, ixor, iland, ilor, imin, imax);
  printf("long %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld\n", la, ls, lm, land, lor, lxor, lland, llor, lmin, lmax);
  printf("float %.9g %.9g %.9g %g %g %g %g\n", fa, fs, fm, fland, flor, fmin, fmax);
  printf("double %.15g %.15g %.15g %g %g %g %g\n", da, ds, dm, dland, dlor, dmin, dmax);

  /* A whole region and a `for` inside one: the region's reduction spans its barriers. */
  long total = 1000, count = 0;
  double dsum = 0.25;
  unsigned umax = 3;
#pragma omp parallel reduction(+: total) reduction(max: umax)
  {
    int t = omp_get_thread_num();
    total += t + 1;
#pragma omp for reduction(+: count, dsum)
    for (int k = 0; k < 3 * N; k++) {
      count += k % 7;
      dsum += k * 0.001;
    }
    total += 10;
    if ((unsigned)(t * 7) > umax) umax = (unsigned)(t * 7);
  }
  printf("region total %ld umax %u count %ld dsum %.12g\n", total, umax, count, dsum);

  /* Sections, and a variable of static storage. */
  static long gsum = 40;
  int prod = 2;
#pragma omp parallel sections reduction(+: gsum) reduction(*: prod)
  {
#pragma omp section
    { gsum += 1; prod *= 3; }
#pragma omp section
    { gsum += 20; prod *= 5; }
#pragma omp section
    { gsum += 300; prod *= 7; }
#pragma omp section
    { gsum += 4000; prod *= 11; }
  }
  short smin = 50;
#pragma omp parallel
  {
#pragma omp sections reduction(min: smin)
    {
#pragma omp section
      smin = smin < 17 ? smin : 17;
#pragma omp section
      smin = smin < -4 ? smin : -4;
    }
  }
  printf("sections gsum %ld prod %d smin %d\n", gsum, prod, smin);

  /* Each thread's copy of a region's reduction variable holds its own running partial
   * result across barriers (it starts from the identity). */
  long acc = 100, seen[8] = {0}, seen2[8] = {0};
  double dm2 = 0.5;
#pragma omp parallel reduction(+: acc) reduction(max: dm2)
  {
    int t = omp_get_thread_num();
    acc += t + 1;
    dm2 = t;
#pragma omp barrier
    seen[t] = acc;
    acc += 10;
#pragma omp barrier
    seen2[t] = acc + (long)dm2;
  }
  printf("across barriers acc %ld dm2 %g seen %ld %ld %ld %ld %ld %ld\n", acc, dm2, seen[0], seen[1],
         seen[2], seen2[0], seen2[1], seen2[2]);
  return 0;
}
