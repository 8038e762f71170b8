/* --sync=lazy, pages left writable in a window (tests/lazy; docs/monitor.md, "Lazy
 * synchronisation", session 9): a node opens the pages it kept two `after` exchanges ago
 * (the next window likely writes them again: a stencil swapping two grids), so that writing
 * them costs no fault, and its create() counts every one of them as written. These regions
 * make that guess right, wrong, and wrong in ways that need the pages' true originals:
 *   a, b  a stencil swapping the grids (the guess right), with a word changed by the
 *         sequential part between two sweeps (start() must read it, not the published copy);
 *   c     kept twice, then written in reverse order: each node's opened pages are written by
 *         another node (the opener's whole page must add nothing to the merge);
 *   d     written once in between (so the next c region opens d, which it does not write:
 *         published unchanged);
 *   e     kept twice, then filled by pread(2) inside a region (the kernel writes opened pages;
 *         `opened nokernel` computes the same values instead: under the mprotect tracker a
 *         kernel write into a tracked page fails with EFAULT, docs/monitor.md "Trackers");
 *   g     kept twice, then written with a critical section whose body writes through a
 *         pointer (its checkpoint diffs whatever the node wrote so far, opened pages too).
 * Nothing is read by another node before the end (a page read once always travels and is
 * never kept again). Each result is printed; gcc -fopenmp's output must be matched. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 150000

static double sum_of(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (double)(i % 11 + 1);
  return s;
}

static long count; /* (a static: see the critical section below) */

int main(int argc, char **argv) {
  int kernel = !(argc > 1 && argv[1][0] == 'n');
  double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N), *c = malloc(sizeof(double) * N);
  double *d = malloc(sizeof(double) * N), *e = malloc(sizeof(double) * N), *g = malloc(sizeof(double) * N);
  if (!a || !b || !c || !d || !e || !g) return 1;
  for (int i = 0; i < N; i++) a[i] = b[i] = (i % 13) * 1.0, c[i] = d[i] = e[i] = g[i] = 0;

  double *u = a, *v = b;
  for (int t = 0; t < 7; t++) {
#pragma omp parallel for
    for (int i = 1; i < N - 1; i++) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
    double *w = u;
    u = v;
    v = w;
    if (t == 3) v[N / 2 + 7] += 1.5; /* the grid the next sweep writes: a page some node opens */
  }

#pragma omp parallel for
  for (int i = 0; i < N; i++) c[i] = i * 0.25;
#pragma omp parallel for
  for (int i = 0; i < N; i++) c[i] = i * 0.5 + 1.0;
#pragma omp parallel for
  for (int i = 0; i < N; i++) d[i] = i % 17;
#pragma omp parallel for
  for (int k = 0; k < N; k++) c[N - 1 - k] = c[N - 1 - k] * 3.0 - k % 5; /* the other end */
#pragma omp parallel for
  for (int i = 0; i < N; i++) c[i] += 0.125; /* opens d, writes c */

  /* e: the kernel writes it in a region (pread of a file made in the sequential part). */
  FILE *f = tmpfile();
  if (!f) return 2;
  for (int i = 0; i < N; i++) {
    double x = 7000.0 + i * 0.75;
    if (fwrite(&x, sizeof x, 1, f) != 1) return 2;
  }
  if (fflush(f) != 0) return 2;
  int fd = fileno(f);
#pragma omp parallel for
  for (int i = 0; i < N; i++) e[i] = i;
#pragma omp parallel for
  for (int i = 0; i < N; i++) e[i] = 2.0 * i;
  enum { CH = 500 };
#pragma omp parallel for
  for (int k = 0; k < N / CH; k++)
    if (!kernel)
      for (int i = k * CH; i < (k + 1) * CH; i++) e[i] = 7000.0 + i * 0.75;
    else if (pread(fd, e + k * CH, CH * sizeof(double), (off_t)k * CH * sizeof(double)) != CH * (ssize_t)sizeof(double))
      e[k * CH] = -1;
  fclose(f);

  /* g: a critical section inside the region that writes it. */
  long *pc = &count; /* (a stack variable written so in a critical section loses updates under
                       * cape, eager too: not this test's subject) */
#pragma omp parallel for
  for (int i = 0; i < N; i++) g[i] = i + 3.0;
#pragma omp parallel for
  for (int i = 0; i < N; i++) g[i] = i + 5.0;
#pragma omp parallel for
  for (int i = 0; i < N; i++) {
    g[i] = g[i] * 2.0 - i;
    if (i % 5000 == 0) {
#pragma omp critical
      *pc += i / 5000;
    }
  }

  printf("a %.6f b %.6f\n", sum_of(a, N), sum_of(b, N));
  printf("c %.6f d %.6f\n", sum_of(c, N), sum_of(d, N));
  printf("e %.6f e[3] %.3f e[N-1] %.3f\n", sum_of(e, N), e[3], e[N - 1]);
  printf("g %.6f count %ld\n", sum_of(g, N), count);
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  free(g);
  return 0;
}
