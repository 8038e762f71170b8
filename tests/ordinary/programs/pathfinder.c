/* Rodinia-like pathfinder: the cheapest path down a grid of walls, one row at a time. */
#include <stdio.h>
#include <stdlib.h>
#define ROWS 60
#define COLS 20000
int main(void) {
  int *wall = malloc(sizeof(int) * ROWS * COLS);
  int *src = malloc(sizeof(int) * COLS), *dst = malloc(sizeof(int) * COLS);
  unsigned s = 7;
  for (int i = 0; i < ROWS * COLS; i++) { s = s * 1664525u + 1013904223u; wall[i] = (s >> 20) % 10; }
  for (int j = 0; j < COLS; j++) src[j] = wall[j];
  for (int r = 1; r < ROWS; r++) {
#pragma omp parallel for
    for (int j = 0; j < COLS; j++) {
      int m = src[j];
      if (j > 0 && src[j - 1] < m) m = src[j - 1];
      if (j < COLS - 1 && src[j + 1] < m) m = src[j + 1];
      dst[j] = wall[r * COLS + j] + m;
    }
    int *t = src; src = dst; dst = t;
  }
  long sum = 0; int best = src[0], at = 0;
  for (int j = 0; j < COLS; j++) { sum += src[j]; if (src[j] < best) { best = src[j]; at = j; } }
  printf("pathfinder min %d at %d sum %ld\n", best, at, sum);
  free(wall); free(src); free(dst);
  return 0;
}
