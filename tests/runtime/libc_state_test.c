/* libcape's rand()/random()/drand48()/strtok() (runtime/src/libc_state.c) give glibc's values:
 * compared with glibc's re-entrant functions on their own buffers (random_r, erand48, ...),
 * unseeded, for seeds at the edges (0, INT_MAX, > INT_MAX), and under CAPE_LIBC_STATE=0. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
int main(void) {
  int bad = 0;
  /* unseeded */
  struct random_data rd; char buf[128]; memset(&rd, 0, sizeof rd); initstate_r(1, buf, 128, &rd);
  for (int i = 0; i < 1000; i++) { int32_t w; random_r(&rd, &w); int r = rand(); if (r != w) { bad++; if (bad < 5) printf("unseeded %d: %d vs %d\n", i, r, w); } }
  unsigned seeds[] = {0, 1, 2, 42, 12345, 2147483647u, 2147483648u, 4294967295u, 3000000000u};
  for (unsigned k = 0; k < sizeof seeds / sizeof *seeds; k++) {
    memset(&rd, 0, sizeof rd); initstate_r(seeds[k], buf, 128, &rd);
    srand(seeds[k]);
    for (int i = 0; i < 2000; i++) { int32_t w; random_r(&rd, &w); long r = (i & 1) ? random() : rand(); if (r != w) { bad++; if (bad < 5) printf("seed %u %d: %ld vs %d\n", seeds[k], i, r, w); } }
  }
  /* drand48 family vs the re-entrant ones on their own buffer */
  unsigned short xs[3] = {0, 0, 0};
  for (int i = 0; i < 1000; i++) { double g = erand48(xs); double m = drand48(); if (g != m) { bad++; if (bad < 5) printf("drand48 unseeded %d %.17g %.17g\n", i, m, g); } }
  long s48[] = {0, 1, 42, -7, 123456789, 0x7fffffffL, -2147483648L};
  for (unsigned k = 0; k < sizeof s48 / sizeof *s48; k++) {
    srand48(s48[k]); unsigned short x[3] = {0x330e, (unsigned short)(s48[k] & 0xffff), (unsigned short)(s48[k] >> 16)};
    for (int i = 0; i < 1000; i++) {
      long g, m; double gd, md;
      switch (i % 3) { case 0: g = nrand48(x); m = lrand48(); break; case 1: g = jrand48(x); m = mrand48(); break; default: gd = erand48(x); md = drand48(); g = gd != md; m = 0; }
      if (g != m) { bad++; if (bad < 5) printf("48 seed %ld %d: %ld vs %ld\n", s48[k], i, m, g); }
    }
  }
  unsigned short sv[3] = {1, 2, 3}; unsigned short *o = seed48(sv); (void)o; unsigned short x2[3] = {1, 2, 3};
  for (int i = 0; i < 100; i++) if (lrand48() != nrand48(x2)) bad++;
  unsigned short p[7] = {5, 6, 7, 0x1234, 0x5678, 0x9, 0x17}; lcong48(p);
  /* jrand48 with lcong48's a/c: glibc's re-entrant calls use the internal a/c too */
  unsigned long long X = 7ULL << 32 | 6ULL << 16 | 5, A = 0x9ULL << 32 | 0x5678ULL << 16 | 0x1234;
  for (int i = 0; i < 100; i++) { X = (X * A + 0x17) & 0xffffffffffffULL; if (mrand48() != (long)(int)(unsigned)(X >> 16)) bad++; }
  char t[] = "a,b,,c d", *q; int n = 0; for (q = strtok(t, ", "); q; q = strtok(NULL, ", ")) n++;
  printf("bad %d tokens %d\n", bad, n);
  return bad != 0;
}
