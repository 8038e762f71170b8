/* PolyBench-like jacobi-1d (two arrays, steps inside one parallel region) and seidel-2d, whose
   in-place 9-point update is a sequential dependency: run as a wavefront, cells with the same
   2*i + j are independent. */
#include <stdio.h>
#include <stdlib.h>
#define N1 4000
#define T1 20
#define N2 48
#define T2 2
static double a[N1], b[N1], g[N2][N2];
int main(void) {
  for (int i = 0; i < N1; i++) { a[i] = ((double)i + 2) / N1; b[i] = ((double)i + 3) / N1; }
#pragma omp parallel
  for (int t = 0; t < T1; t++) {
#pragma omp for
    for (int i = 1; i < N1 - 1; i++) b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1]);
#pragma omp for
    for (int i = 1; i < N1 - 1; i++) a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1]);
  }
  for (int i = 0; i < N2; i++) for (int j = 0; j < N2; j++) g[i][j] = ((double)i * (j + 2) + 2) / N2;
  for (int t = 0; t < T2; t++)
    for (int w = 3; w <= 3 * (N2 - 2); w++) {
      int lo = (w - (N2 - 2) + 1) / 2; if (lo < 1) lo = 1;
      int hi = (w - 1) / 2; if (hi > N2 - 2) hi = N2 - 2;
#pragma omp parallel for
      for (int i = lo; i <= hi; i++) {
        int j = w - 2 * i;
        g[i][j] = (g[i - 1][j - 1] + g[i - 1][j] + g[i - 1][j + 1] + g[i][j - 1] + g[i][j] + g[i][j + 1] +
                   g[i + 1][j - 1] + g[i + 1][j] + g[i + 1][j + 1]) / 9.0;
      }
    }
  double ja = 0, sg = 0;
  for (int i = 0; i < N1; i++) ja += a[i] * (i % 3);
  for (int i = 0; i < N2; i++) for (int j = 0; j < N2; j++) sg += g[i][j] * ((i + j) % 4);
  printf("jacobi-1d %.10g a[17] %.10g\nseidel-2d %.10g g[20][20] %.10g\n", ja, a[17], sg, g[20][20]);
  return 0;
}
