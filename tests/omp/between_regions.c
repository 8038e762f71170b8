/* The sequential part writes single words between parallel regions, on pages the regions'
 * merged results also write (before a region: a slave's inject of `before` meets pages it
 * wrote itself; after one: words written over a merged result just injected), and a region
 * then reads them. Issue 14: the uffd tracker takes an injected checkpoint into its copies
 * of the pages; a word written around the inject must still reach the next checkpoint. */
#include <stdio.h>

#define N 5000
#define STEPS 8
static double a[N], b[N];

int main(void) {
  for (int i = 0; i < N; i++) a[i] = i % 7;
  for (int t = 0; t < STEPS; t++) {
    a[(t * 613) % N] += 1000.0;
#pragma omp parallel for
    for (int i = 1; i < N - 1; i++) b[i] = 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
    b[(t * 977 + 1) % N] -= 3.0;
    b[0] = b[N - 1] = t;
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = b[i] + (i % 3);
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += a[i] * (i % 11);
  printf("between_regions checksum %.6f a[613] %.6f\n", s, a[613]);
  return 0;
}
