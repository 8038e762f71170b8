/* --sync=lazy, who serves a page (tests/lazy): every node keeps the pages it alone wrote in
 * a region and the others fetch them from it when they first touch them, a slave from another
 * slave through the master. Regions here read blocks other nodes wrote (shifted by a third of
 * the array: on 3 and 4 nodes a slave reads a slave's block), write pages several nodes
 * share (schedule(static, C) with chunks of 1 to 3000 elements: a page holds 512 doubles,
 * so every node's words meet in most pages, which the master must merge), reduce over the
 * array, and the sequential part reads and rewrites all of it between regions. Each result
 * is printed; gcc -fopenmp's output must be matched. */
#include <stdio.h>
#include <stdlib.h>

#define N 200000

static double sum_of(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * (double)(i % 13 + 1);
  return s;
}

int main(void) {
  double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
  static double c[N]; /* .bss */
  if (!a || !b) return 1;
  for (int i = 0; i < N; i++) a[i] = b[i] = c[i] = 0;

  /* Blocks: each node writes its own, then reads the block a third further on. */
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = i * 0.25 + 1;
#pragma omp parallel for
  for (int i = 0; i < N; i++) b[i] = a[(i + N / 3) % N] * 2 + a[N - 1 - i];
  printf("shifted %.6f\n", sum_of(b, N));

  /* Interleaved writes: pages every node writes a part of. */
  const int chunks[] = {1, 64, 700, 3000};
  for (int k = 0; k < 4; k++) {
#pragma omp parallel for schedule(static, chunks[k])
    for (int i = 0; i < N; i++) c[i] = b[i] + k + (i % 7);
#pragma omp parallel for schedule(static, chunks[k])
    for (int i = 0; i < N; i++) a[i] = c[(i + 1) % N] - c[i];
    printf("chunk %d: %.6f %.6f\n", chunks[k], sum_of(c, N), sum_of(a, N));
  }

  /* A reduction over pages the others kept, then sequential writes into them. */
  double total = 0;
#pragma omp parallel for reduction(+ : total)
  for (int i = 0; i < N; i++) total += c[N - 1 - i] * 0.5;
  for (int i = 0; i < N; i += 97) c[i] = -c[i];
#pragma omp parallel for
  for (int i = 1; i < N - 1; i++) b[i] = c[i - 1] + c[i + 1];
  printf("total %.6f then %.6f\n", total, sum_of(b, N));

  /* A stencil of sweeps, the arrays swapped by pointer (the halo comes from a neighbour). */
  for (int t = 0; t < 6; t++) {
#pragma omp parallel for
    for (int i = 1; i < N - 1; i++) b[i] = 0.5 * a[i] + 0.25 * (a[i - 1] + a[i + 1]);
    double *w = a;
    a = b;
    b = w;
  }
  printf("stencil %.6f\n", sum_of(a, N));
  free(a);
  free(b);
  return 0;
}
