/* VECTOR, 002_2c61c2cb27f62a9a.txt Fig. 8, written so that it is well defined: A and Z
 * are private vectors, B and Y shared. How it differs from the figure:
 *  - A, B, Y, Z are file-scope arrays, not pointer parameters: `private(A, Z)` on pointer
 *    parameters privatises the pointers, which are then uninitialised (the figure crashes
 *    natively);
 *  - each thread (node) initialises its private copies before its share, and the inner
 *    j-loops assign (A[j] = j/2 + 10.25, Z[j] = z0(j) * 0.025) instead of accumulating,
 *    which in the figure depends on how many iterations a thread happened to run;
 *  - j is private (a global in the figure's sense: it is written by every thread);
 *  - under CAPE the two `omp for nowait` loops are two parallel-for regions (template.h).
 * Every node writes all of its private A (or Z) and B (or Y) entries of its chunk; TICKPT
 * sends only B and Y, DICKPT everything written, i, j, A and Z included (002 Fig. 11).
 * Prints "n=.. m=.. B=<sum> Y=<sum>". Arguments: tickpt|dickpt N M. */
#include <stdio.h>
#include <stdlib.h>
#ifndef NATIVE
#include "template.h"
#endif

#define NMAX 20000
static double A[NMAX], Z[NMAX]; /* private */
static double B[NMAX], Y[NMAX]; /* shared */
static int i, j, n, m;

#define INIT_A() for (j = 0; j < n; j++) A[j] = j * 0.5
#define INIT_Z() for (j = 0; j < m; j++) Z[j] = 1.0 + j * 0.001
#define BODY1(i)                                        \
  do {                                                  \
    for (j = 0; j < n; j += 20) A[j] = j * 0.5 + 10.25; \
    B[i] = (A[i] + A[(i) - 1]) / 2;                     \
  } while (0)
#define BODY2(i)                                                   \
  do {                                                             \
    for (j = 0; j < m; j += 20) Z[j] = (1.0 + j * 0.001) * 0.025; \
    Y[i] = Z[i] * (i);                                             \
  } while (0)

#ifndef NATIVE
static void clauses(void) {
  cape_set_private(A, sizeof(double) * n);
  cape_set_private(Z, sizeof(double) * m);
  cape_set_private(&j, sizeof j);
  cape_set_shared(B, sizeof(double) * n);
  cape_set_shared(Y, sizeof(double) * m);
}
/* Loop 1 runs over i = 1 .. n-1: iteration number t is i = t + 1. */
static void body1(int lo, int hi) {
  INIT_A();
  for (i = lo + 1; i < hi + 1; i++) BODY1(i);
}
static void body2(int lo, int hi) {
  INIT_Z();
  for (i = lo; i < hi; i++) BODY2(i);
}
#endif

int main(int argc, char **argv) {
  n = argc > 2 ? atoi(argv[2]) : 2000;
  m = argc > 3 ? atoi(argv[3]) : n;
  if (n < 2 || n > NMAX || m < 1 || m > NMAX) return 2;
#ifndef NATIVE
  tpl_model(argc, argv);
  tpl_for(n - 1, clauses, body1, 0);
  tpl_for(m, clauses, body2, 0);
#else
#pragma omp parallel private(A, Z, j) shared(B, Y)
  {
    INIT_A();
    INIT_Z();
#pragma omp for nowait
    for (i = 1; i < n; i++) BODY1(i);
#pragma omp for nowait
    for (i = 0; i < m; i++) BODY2(i);
  }
#endif
  double sb = 0, sy = 0;
  for (int k = 0; k < n; k++) sb += B[k];
  for (int k = 0; k < m; k++) sy += Y[k];
  printf("n=%d m=%d B=%.17g Y=%.17g\n", n, m, sb, sy);
  return 0;
}
