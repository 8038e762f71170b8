/* A determinism violation in a later region (issue 14: from the second region on, the
 * determinism check digests only the memory that may have changed since the previous
 * region's begin): four regions agree, then the sequential part writes the process id into
 * one element of a large static array and one of a heap array, so the fifth region's memory
 * differs between nodes. cape must name that region and exit non-zero. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 300000
static int a[N];

int main(void) {
  int *h = malloc(N * sizeof *h);
  if (!h) return 1;
  for (int i = 0; i < N; i++) a[i] = h[i] = i % 1000;
  long sum = 0;
  for (int r = 0; r < 4; r++) {
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < N; i++) sum += a[i] + h[i];
    a[r * 1000] += 1; /* the same on every node */
  }
  a[N / 2 + 123] = (int)getpid();
  h[N / 3 + 45] = (int)getpid();
#pragma omp parallel for reduction(+ : sum) /* contract: region begins */
  for (int i = 0; i < N; i++) {
    sum += a[i] + h[i];
  } /* contract: region ends */
  printf("sum %ld\n", sum);
  free(h);
  return 0;
}
