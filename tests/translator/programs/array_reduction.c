/* Array and array-section reductions (issue 12) with every operator, on parallel for, a
 * for and sections inside a region (with a barrier between), a parallel region's own
 * reduction; whole arrays (one and two dimensions) and sections a[lo:len], a[:len], a[lo:]. */
#include <stdio.h>
#define BINS 8
#define N 240
typedef long counter;
int main(void) {
  int i, n = N;
  long hist[BINS] = {0};
  double mx[16], mn[16];
  int prod[4] = {1, 1, 1, 1}, sub[3] = {100, 100, 100};
  unsigned band[3] = {~0u, ~0u, ~0u}, bor[3] = {0, 0, 0}, bxor[3] = {5, 5, 5};
  int land[2] = {1, 1}, lor[2] = {0, 0};
  counter grid[3][4] = {{0}};
  double a[32];
  for (i = 0; i < 16; i++) mx[i] = mn[i] = 50;
  for (i = 0; i < 32; i++) a[i] = -1;
#pragma omp parallel for reduction(+: hist)
  for (i = 0; i < N; i++) hist[(i * 7) % BINS] += i;
#pragma omp parallel for reduction(max: mx[0:n / 20]) reduction(min: mn[4:8])
  for (i = 0; i < N; i++) {
    mx[i % 12] = mx[i % 12] > i * 0.5 ? mx[i % 12] : i * 0.5;
    mn[4 + i % 8] = mn[4 + i % 8] < 100 - i * 0.25 ? mn[4 + i % 8] : 100 - i * 0.25;
  }
#pragma omp parallel for reduction(*: prod) reduction(-: sub[:3])
  for (i = 0; i < 12; i++) {
    prod[i % 4] *= 1 + i % 3;
    sub[i % 3] -= i;
  }
#pragma omp parallel for reduction(&: band) reduction(|: bor) reduction(^: bxor[1:])
  for (i = 0; i < 30; i++) {
    band[i % 3] &= ~(1u << (i % 16));
    bor[i % 3] |= 1u << (i % 20);
    if (i % 3) bxor[i % 3] ^= (unsigned)i * 2654435761u;
  }
#pragma omp parallel for reduction(&&: land) reduction(||: lor)
  for (i = 0; i < 20; i++) {
    land[0] = land[0] && i < 100;
    land[1] = land[1] && i != 13;
    lor[0] = lor[0] || i == 17;
    lor[1] = lor[1] || i > 1000;
  }
#pragma omp parallel reduction(+: grid)
  {
#pragma omp for
    for (i = 0; i < 12; i++) grid[i % 3][i % 4] += i;
#pragma omp barrier
#pragma omp for reduction(max: a[8:16])
    for (i = 0; i < 64; i++) a[8 + i % 16] = a[8 + i % 16] > i ? a[8 + i % 16] : i;
#pragma omp sections reduction(+: hist[2:3])
    {
#pragma omp section
      hist[2] += 1000;
#pragma omp section
      hist[4] += 2000;
    }
    grid[2][3] += 1;
  }
  for (i = 0; i < BINS; i++) printf("%ld ", hist[i]);
  printf("\n");
  for (i = 0; i < 16; i++) printf("%g/%g ", mx[i], mn[i]);
  printf("\n%d %d %d %d | %d %d %d\n", prod[0], prod[1], prod[2], prod[3], sub[0], sub[1], sub[2]);
  printf("%x %x %x | %x %x %x | %x %x %x\n", band[0], band[1], band[2], bor[0], bor[1], bor[2], bxor[0], bxor[1], bxor[2]);
  printf("%d %d %d %d\n", land[0], land[1], lor[0], lor[1]);
  for (i = 0; i < 12; i++) printf("%ld ", grid[i / 4][i % 4]);
  printf("\n");
  for (i = 0; i < 32; i++) printf("%g ", a[i]);
  printf("\n");
  return 0;
}
