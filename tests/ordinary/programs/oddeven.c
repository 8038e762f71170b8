/* Odd-even transposition sort: every phase inside one parallel region, nowait loops separated
   by explicit barriers. */
#include <stdio.h>
#include <stdlib.h>
#define N 128
int main(void) {
  int *a = malloc(sizeof(int) * N);
  unsigned s = 11;
  for (int i = 0; i < N; i++) { s = s * 1664525u + 1013904223u; a[i] = (s >> 12) % 100000; }
  long swaps = 0;
#pragma omp parallel
  {
    for (int phase = 0; phase < N; phase++) {
#pragma omp for nowait reduction(+:swaps)
      for (int i = phase % 2; i < N - 1; i += 2)
        if (a[i] > a[i + 1]) { int t = a[i]; a[i] = a[i + 1]; a[i + 1] = t; swaps++; }
#pragma omp barrier
    }
  }
  long ok = 1, sum = 0;
  for (int i = 0; i < N; i++) { if (i && a[i - 1] > a[i]) ok = 0; sum += (long)a[i] * (i % 97); }
  printf("oddeven sorted %s swaps %ld checksum %ld\n", ok ? "yes" : "NO", swaps, sum);
  return 0;
}
