/* Rodinia-like hotspot: a chip's temperature grid stepped with its power map, two buffers. */
#include <stdio.h>
#include <stdlib.h>
#define R 96
#define C 128
#define STEPS 12
static double temp_a[R][C], temp_b[R][C], power[R][C];
int main(void) {
  unsigned s = 12345;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      s = s * 1103515245u + 12345u;
      temp_a[i][j] = 320.0 + (s >> 16) % 40;
      power[i][j] = ((s >> 8) % 100) / 1000.0;
    }
  double (*src)[C] = temp_a, (*dst)[C] = temp_b;
  const double cap = 0.5, rx = 0.1, ry = 0.1, rz = 0.05, amb = 80.0;
  for (int t = 0; t < STEPS; t++) {
#pragma omp parallel for
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++) {
        double n = src[i > 0 ? i - 1 : i][j], so = src[i < R - 1 ? i + 1 : i][j];
        double w = src[i][j > 0 ? j - 1 : j], e = src[i][j < C - 1 ? j + 1 : j];
        double c = src[i][j];
        dst[i][j] = c + cap * (power[i][j] + (n + so - 2 * c) * ry + (e + w - 2 * c) * rx + (amb - c) * rz);
      }
    double (*tmp)[C] = src; src = dst; dst = tmp;
  }
  double sum = 0, mx = 0;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) { sum += src[i][j]; if (src[i][j] > mx) mx = src[i][j]; }
  printf("hotspot sum %.6g max %.6g corner %.6g\n", sum, mx, src[R / 2][C / 3]);
  return 0;
}
