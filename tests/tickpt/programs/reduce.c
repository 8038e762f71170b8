/* Every reduction operator of 002 Table 1 over int, long, float and double, in two
 * regions (the second starts from the first's results, so the merged partial results must
 * be applied to each variable's original value). Built twice: with -DNATIVE -fopenmp it is
 * the OpenMP program (`#pragma omp parallel for reduction(...)`), without it the CAPE
 * program the translator would make (template.h, cape_reduction before cape_start()).
 * Prints one line per variable: "<type> <op> <value>". Argument: tickpt|dickpt. */
#include <stdio.h>
#ifndef NATIVE
#include "template.h"
#endif

#define N 1000
#define REGIONS 2

static int ia = 5, is = 10, im = 3, iand = -1, ior = 1 << 30, ixor = 0x5555, iland = 1, ilor = 0,
           imin = 100, imax = 5;
static long la = 7, ls = 11, lm = 2, land_ = -1, lor_ = 1L << 62, lxor = 0x1234, lland = 1,
            llor = 0, lmin = 100, lmax = -5;
static float fa = 1.5f, fs = 2.0f, fm = 0.5f, fland = 1.0f, flor = 0.0f, fmin_ = 1000.0f,
             fmax_ = -1000.0f;
static double da = 0.5, ds = 3.0, dm = 0.75, dland = 1.0, dlor = 0.0, dmin_ = 1e9, dmax_ = -1e9;

/* One iteration. A macro so that the OpenMP build refers to the private copies. */
#define BODY(i)                                                           \
  do {                                                                    \
    int v_ = ((i) * 37) % 1000 - 300;                                     \
    ia += (i);                                                            \
    is -= (i);                                                            \
    if ((i) % 100 == 0) im *= 2;                                          \
    if ((i) % 97 == 0) iand &= ~(1 << ((i) / 97));                        \
    ior |= 1 << ((i) % 30);                                               \
    ixor ^= (i);                                                          \
    iland = iland && ((i) != 500);                                        \
    ilor = ilor || ((i) == 777);                                          \
    if (v_ < imin) imin = v_;                                             \
    if (v_ > imax) imax = v_;                                             \
    la += (long)(i) * 100000007L;                                         \
    ls -= (long)(i) * 3;                                                  \
    if ((i) % 100 == 0) lm *= 3;                                          \
    if ((i) % 97 == 0) land_ &= ~(1L << ((i) / 97 + 40));                 \
    lor_ |= 1L << ((i) % 60);                                             \
    lxor ^= (long)(i) << 20;                                              \
    lland = lland && ((i) != 3);                                          \
    llor = llor || ((i) == 999);                                          \
    if ((long)v_ * 1000000000L < lmin) lmin = (long)v_ * 1000000000L;     \
    if ((long)v_ * 1000000000L > lmax) lmax = (long)v_ * 1000000000L;     \
    fa += (i) * 0.5f;                                                     \
    fs -= (i) * 0.25f;                                                    \
    if ((i) % 100 == 0) fm *= 1.5f;                                       \
    fland = fland && ((i) != 100000);                                     \
    flor = flor || ((i) == 0);                                            \
    if (v_ * 0.5f < fmin_) fmin_ = v_ * 0.5f;                             \
    if (v_ * 0.5f > fmax_) fmax_ = v_ * 0.5f;                             \
    da += (i) * 0.1;                                                      \
    ds -= (i) * 0.01;                                                     \
    if ((i) % 100 == 0) dm *= 1.25;                                       \
    dland = dland && ((i) != 250);                                        \
    dlor = dlor || ((i) > 100000);                                        \
    if (v_ * 0.125 < dmin_) dmin_ = v_ * 0.125;                           \
    if (v_ * 0.125 > dmax_) dmax_ = v_ * 0.125;                           \
  } while (0)

#ifndef NATIVE
#define RED(v, op, t) cape_reduction(&v, sizeof v, op, t)
static void clauses(void) {
  RED(ia, CAPE_RED_ADD, CAPE_T_INT32); RED(is, CAPE_RED_SUB, CAPE_T_INT32);
  RED(im, CAPE_RED_MUL, CAPE_T_INT32); RED(iand, CAPE_RED_BAND, CAPE_T_INT32);
  RED(ior, CAPE_RED_BOR, CAPE_T_INT32); RED(ixor, CAPE_RED_BXOR, CAPE_T_INT32);
  RED(iland, CAPE_RED_LAND, CAPE_T_INT32); RED(ilor, CAPE_RED_LOR, CAPE_T_INT32);
  RED(imin, CAPE_RED_MIN, CAPE_T_INT32); RED(imax, CAPE_RED_MAX, CAPE_T_INT32);
  RED(la, CAPE_RED_ADD, CAPE_T_INT64); RED(ls, CAPE_RED_SUB, CAPE_T_INT64);
  RED(lm, CAPE_RED_MUL, CAPE_T_INT64); RED(land_, CAPE_RED_BAND, CAPE_T_INT64);
  RED(lor_, CAPE_RED_BOR, CAPE_T_INT64); RED(lxor, CAPE_RED_BXOR, CAPE_T_INT64);
  RED(lland, CAPE_RED_LAND, CAPE_T_INT64); RED(llor, CAPE_RED_LOR, CAPE_T_INT64);
  RED(lmin, CAPE_RED_MIN, CAPE_T_INT64); RED(lmax, CAPE_RED_MAX, CAPE_T_INT64);
  RED(fa, CAPE_RED_ADD, CAPE_T_FLOAT); RED(fs, CAPE_RED_SUB, CAPE_T_FLOAT);
  RED(fm, CAPE_RED_MUL, CAPE_T_FLOAT); RED(fland, CAPE_RED_LAND, CAPE_T_FLOAT);
  RED(flor, CAPE_RED_LOR, CAPE_T_FLOAT); RED(fmin_, CAPE_RED_MIN, CAPE_T_FLOAT);
  RED(fmax_, CAPE_RED_MAX, CAPE_T_FLOAT);
  RED(da, CAPE_RED_ADD, CAPE_T_DOUBLE); RED(ds, CAPE_RED_SUB, CAPE_T_DOUBLE);
  RED(dm, CAPE_RED_MUL, CAPE_T_DOUBLE); RED(dland, CAPE_RED_LAND, CAPE_T_DOUBLE);
  RED(dlor, CAPE_RED_LOR, CAPE_T_DOUBLE); RED(dmin_, CAPE_RED_MIN, CAPE_T_DOUBLE);
  RED(dmax_, CAPE_RED_MAX, CAPE_T_DOUBLE);
}
static void body(int lo, int hi) {
  for (int i = lo; i < hi; ++i) BODY(i);
}
#endif

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
#ifndef NATIVE
  tpl_model(argc, argv);
#endif
  for (int r = 0; r < REGIONS; ++r) {
#ifdef NATIVE
#pragma omp parallel for reduction(+ : ia, la, fa, da) reduction(- : is, ls, fs, ds)   \
    reduction(* : im, lm, fm, dm) reduction(& : iand, land_) reduction(| : ior, lor_) \
    reduction(^ : ixor, lxor) reduction(&& : iland, lland, fland, dland)            \
    reduction(|| : ilor, llor, flor, dlor) reduction(min : imin, lmin, fmin_, dmin_) \
    reduction(max : imax, lmax, fmax_, dmax_)
    for (int i = 0; i < N; ++i) BODY(i);
#else
    tpl_for(N, clauses, body, 0);
#endif
  }
  printf("int + %d\nint - %d\nint * %d\nint & %d\nint | %d\nint ^ %d\nint && %d\nint || %d\n"
         "int min %d\nint max %d\n", ia, is, im, iand, ior, ixor, iland, ilor, imin, imax);
  printf("long + %ld\nlong - %ld\nlong * %ld\nlong & %ld\nlong | %ld\nlong ^ %ld\nlong && %ld\n"
         "long || %ld\nlong min %ld\nlong max %ld\n", la, ls, lm, land_, lor_, lxor, lland, llor,
         lmin, lmax);
  printf("float + %.9g\nfloat - %.9g\nfloat * %.9g\nfloat && %.9g\nfloat || %.9g\nfloat min %.9g\n"
         "float max %.9g\n", fa, fs, fm, fland, flor, fmin_, fmax_);
  printf("double + %.17g\ndouble - %.17g\ndouble * %.17g\ndouble && %.17g\ndouble || %.17g\n"
         "double min %.17g\ndouble max %.17g\n", da, ds, dm, dland, dlor, dmin_, dmax_);
  return 0;
}
