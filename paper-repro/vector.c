/* VECTOR: the program of 002_2c61c2cb27f62a9a.txt Fig. 8 (after Bull's OpenMP 2.0
 * microbenchmark), whose merged checkpoint sizes 002 Fig. 11 compares under CAPE-DICKPT and
 * CAPE-TICKPT for N = M = 2000..14000 on 16 nodes.
 *
 * As in Fig. 8: one `parallel` region with two `for nowait` loops; A and Z are private, B
 * and Y shared; the loops write A[j] and Z[j] every 20 elements, then B[i] and Y[i].
 * Differences from the figure, each needed for a program with a defined result:
 *   - the arrays are globals of N elements (Fig. 8 passes them as parameters, where
 *     private(A) would make the pointer, not the array, private and uninitialised);
 *   - firstprivate(A, Z) instead of private(A, Z): OpenMP leaves a private copy
 *     uninitialised, and the loops read A and Z before writing them. Privacy is what 002
 *     measures: under TICKPT neither travels (Sect. 5: "i, vector A, and vector Z ... are
 *     not saved"), under DICKPT every write does;
 *   - the missing `;` after `A[j] + 10.25` and the integer arrays kept (the sums truncate).
 * Prints a checksum of B and Y. B depends on how the iterations are split (each thread's
 * copy of A grows with its own iterations), so the reference is `gcc -fopenmp` with as many
 * threads as CAPE has nodes (static schedule: the same split); Y does not.
 *   vector [N [M]]      N, M <= MAX_N, default 2000 */
#include <stdio.h>
#include <stdlib.h>

#ifndef MAX_N
#define MAX_N 16000
#endif

static int A[MAX_N], B[MAX_N], Y[MAX_N], Z[MAX_N];

int vector2(int n, int m) {
  int i, j;
#pragma omp parallel firstprivate(A, Z) shared(B, Y) private(i, j)
  {
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
  int m = argc > 2 ? atoi(argv[2]) : n;
  if (n < 2 || n > MAX_N || m < 1 || m > MAX_N) {
    fprintf(stderr, "vector: N must be 2..%d and M 1..%d\n", MAX_N, MAX_N);
    return 2;
  }
  for (int k = 0; k < MAX_N; k++) {
    A[k] = k % 7;
    Z[k] = k % 11 + 1;
  }
  vector2(n, m);
  long sb = 0, sy = 0;
  for (int k = 0; k < n; k++) sb += (long)B[k] * (k % 13 + 1);
  for (int k = 0; k < m; k++) sy += (long)Y[k] * (k % 13 + 1);
  printf("vector n=%d m=%d B=%ld Y=%ld\n", n, m, sb, sy);
  return 0;
}
