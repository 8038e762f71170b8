/* A determinism violation inside a big input the regions only read (issue 14: under uffd the
 * digest at a region's begin hashes the tracker's copies of memory, brought up to date
 * first): two regions agree, then the sequential part writes the process id into one word of
 * an 8 MiB matrix that no region writes, so the third region's memory differs between nodes.
 * cape must name that region and exit non-zero. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 1024

int main(void) {
  double *m = malloc(sizeof(double) * N * N), *y = malloc(sizeof(double) * N);
  if (!m || !y) return 1;
  for (long k = 0; k < (long)N * N; k++) m[k] = (double)(k % 17);
  double sum = 0;
  for (int r = 0; r < 2; r++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int j = 0; j < N; j++) s += m[(long)i * N + j];
      y[i] = s;
    }
    for (int i = 0; i < N; i++) sum += y[i];
  }
  m[(long)N * N / 2 + 777] = (double)getpid();
#pragma omp parallel for /* contract: region begins */
  for (int i = 0; i < N; i++) {
    double s = 0;
    for (int j = 0; j < N; j++) s += m[(long)i * N + j];
    y[i] = s;
  } /* contract: region ends */
  for (int i = 0; i < N; i++) sum += y[i];
  printf("sum %.3f\n", sum);
  free(m);
  free(y);
  return 0;
}
