/* Matrix product, the papers' benchmark (001_3036025dc34c4021.txt Sect. IV, 003 Sect. VI). */
#include <stdio.h>

#define N 96
static double a[N][N], b[N][N], c[N][N];

int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      a[i][j] = (double)((i * 7 + j * 3) % 11) - 5.0;
      b[i][j] = (double)((i * 5 + j * 2) % 13) - 6.0;
    }
#pragma omp parallel for private(j, k)
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      double s = 0;
      for (k = 0; k < N; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
  double trace = 0, sum = 0;
  for (i = 0; i < N; i++) {
    trace += c[i][i];
    for (j = 0; j < N; j++) sum += c[i][j] * (double)(i + 1);
  }
  printf("trace %.1f weighted sum %.1f c[3][5] %.1f\n", trace, sum, c[3][5]);
  return 0;
}
