/* Rodinia-like lud: LU decomposition in place, one parallel loop per pivot. */
#include <stdio.h>
#include <stdlib.h>
#define N 160
int main(void) {
  double (*a)[N] = malloc(sizeof(double[N][N]));
  unsigned s = 5;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { s = s * 1103515245u + 12345u; a[i][j] = (s >> 16) % 100 / 50.0 + (i == j ? N : 0); }
  for (int k = 0; k < N - 1; k++) {
#pragma omp parallel for schedule(static)
    for (int i = k + 1; i < N; i++) {
      a[i][k] /= a[k][k];
      for (int j = k + 1; j < N; j++) a[i][j] -= a[i][k] * a[k][j];
    }
  }
  double tr = 0, low = 0;
  for (int i = 0; i < N; i++) { tr += a[i][i]; for (int j = 0; j < i; j++) low += a[i][j]; }
  printf("lud trace %.8g lower %.8g a[N-1][N-1] %.8g\n", tr, low, a[N - 1][N - 1]);
  free(a);
  return 0;
}
