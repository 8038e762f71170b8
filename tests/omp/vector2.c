/* The VECTOR program of 002_2c61c2cb27f62a9a.txt Fig. 8, written so that it is well defined.
 * How it differs from the figure:
 *  - the figure declares A, B, Y, Z as pointer parameters and makes A and Z private: the
 *    private copies are then uninitialised pointers and the program crashes natively. The
 *    paper means private vectors, so here A, Z, B, Y are arrays (file scope, n <= MAXN) and
 *    private(A, Z) gives each thread its own copy of the arrays;
 *  - each thread initialises its private A and Z before using them (a private copy starts
 *    uninitialised in OpenMP);
 *  - j is private too: the figure shares it, and every thread's inner loop races on it;
 *  - the missing ';' after `A[j] + 10.25` is added.
 * A and Z are private, B and Y shared, as in the figure. The default schedule (static) is
 * the same natively and on CAPE, so B's values, which depend on the iterations a thread ran
 * before, agree. Argument: n = m (default 2000). */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 14000
int A[MAXN], B[MAXN], Y[MAXN], Z[MAXN];

int vector2(int n, int m) {
  int i, j;
#pragma omp parallel private(A, Z, j) shared(B, Y)
  {
    for (j = 0; j < n; j++) A[j] = j;
    for (j = 0; j < m; j++) Z[j] = 2 * j;
#pragma omp for nowait
    for (i = 1; i < n; i++) {
      for (j = 0; j < n; j += 20) A[j] = A[j] + 10.25;
      B[i] = (A[i] + A[i - 1]) / 2;
    }
#pragma omp for nowait
    for (i = 0; i < m; i++) {
      for (j = 0; j < m; j += 20) Z[j] = Z[j] * 0.025;
      Y[i] = Z[i] * i;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n < 2 || n > MAXN) return 2;
  for (int k = 0; k < MAXN; k++) A[k] = Z[k] = -1;
  vector2(n, n);
  long sb = 0, sy = 0;
  for (int k = 0; k < n; k++) sb += B[k], sy += Y[k];
  printf("n %d B[1] %d B[%d] %d Y[3] %d Y[%d] %d sum B %ld sum Y %ld A[0] %d Z[0] %d\n", n, B[1], n - 1,
         B[n - 1], Y[3], n - 1, Y[n - 1], sb, sy, A[0], Z[0]);
  return 0;
}
