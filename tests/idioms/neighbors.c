/* long double, _Complex double, unsigned char and short arrays written by
 * neighbouring iterations (schedule(static,1): every element by another thread),
 * bitfields in a struct written under single. */
#include <omp.h>
#include <stdio.h>
#include <complex.h>
#define N 1001
unsigned char uc[N];
short sh[N];
long double ld[N];
_Complex double cz[N];
struct flags { unsigned a : 3; unsigned b : 5; unsigned c : 1; signed d : 7; unsigned e : 16; } fl = {1, 2, 0, -3, 7};
int main(void) {
  for (int i = 0; i < N; i++) { uc[i] = 0xAA; sh[i] = -1; }
#pragma omp parallel
  {
#pragma omp for schedule(static, 1)
    for (int i = 0; i < N; i++) { uc[i] = (unsigned char)(i * 3); sh[i] = (short)(i * -7); }
#pragma omp single
    { fl.a = 5; fl.b = 17; fl.c = 1; fl.d = -60; }
#pragma omp for schedule(static, 1)
    for (int i = 0; i < N; i++) { ld[i] = (long double)i / 3.0L; cz[i] = i + (i * 0.5) * I; }
#pragma omp for schedule(static, 3)
    for (int i = 0; i < N; i++) if (i % 2) uc[i] = (unsigned char)(uc[i] + 1); else sh[i] = (short)(sh[i] + 1);
#pragma omp single nowait
    fl.e = 40000;
  }
  unsigned long us = 0; long ss = 0; long double ls = 0; _Complex double cs = 0;
  for (int i = 0; i < N; i++) { us = us * 7 + uc[i]; ss += sh[i] * (i % 5 + 1); ls += ld[i]; cs += cz[i]; }
  printf("us %lu ss %ld ls %.6Lg cs %.6g %.6g fl %u %u %u %d %u\n", us, ss, ls, creal(cs), cimag(cs), fl.a, fl.b, fl.c,
         fl.d, fl.e);
  return 0;
}
