/* --sync=lazy, pages a node keeps again without reading them (tests/lazy; docs/monitor.md,
 * "Lazy synchronisation", session 8): from the second time a node alone writes a page, its
 * create() neither diffs nor reads it (the master's too), and its tracker's copy of the page
 * is then the one the node published. These regions make every later use of such a page
 * need its true original:
 *   x  kept twice, then read by the other nodes (so the writer must diff it again, against
 *      the copy it published: the values it writes then equal those of the first time, so a
 *      diff against the first time's copy would see no change and the readers would keep
 *      the second time's);
 *   z  kept twice, then written by every node (schedule(static, 1): a page holds 512
 *      doubles, so every node writes words of every page): the master merges its own kept
 *      pages and the slaves' against their base, which its tracker did not read;
 *   q  kept once, then written by every node the same way (the base is the tracker's copy).
 * Each result is printed; gcc -fopenmp's output must be matched. */
#include <stdio.h>
#include <stdlib.h>

#define N 120000

static double sum_of(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (double)(i % 11 + 1);
  return s;
}

int main(void) {
  double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
  double *z = malloc(sizeof(double) * N), *q = malloc(sizeof(double) * N);
  if (!x || !y || !z || !q) return 1;
  for (int i = 0; i < N; i++) x[i] = y[i] = z[i] = q[i] = 0;

  /* x: written alone three times, read by the others in between. */
  for (int round = 0; round < 2; round++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) x[i] = i + 1.0;
#pragma omp parallel for
    for (int i = 0; i < N; i++) x[i] = 2.0 * i + 1.0;
#pragma omp parallel for
    for (int i = 0; i < N; i++) y[i] = x[(i + N / 3) % N] + x[N - 1 - i];
    printf("x read %d: %.3f\n", round, sum_of(y, N));
#pragma omp parallel for
    for (int i = 0; i < N; i++) x[i] = i + 1.0; /* the first values again */
#pragma omp parallel for
    for (int i = 0; i < N; i++) y[i] = x[(i + N / 3) % N] - x[N - 1 - i];
    printf("x again %d: %.3f\n", round, sum_of(y, N));
  }

  /* z: kept twice, then every node writes every page. */
#pragma omp parallel for
  for (int i = 0; i < N; i++) z[i] = 3.0 * i;
#pragma omp parallel for
  for (int i = 0; i < N; i++) z[i] = 3.0 * i + 7.0;
#pragma omp parallel for schedule(static, 1)
  for (int i = 0; i < N; i++) z[i] = z[i] * 0.5 + (i % 5);
  printf("z shared: %.3f\n", sum_of(z, N));

  /* q: kept once, then every node writes every page (chunks of 3 and of 100 elements). */
#pragma omp parallel for
  for (int i = 0; i < N; i++) q[i] = 5.0 * i + 1.0;
#pragma omp parallel for schedule(static, 3)
  for (int i = 0; i < N; i++) q[i] = q[i] - (i % 9);
#pragma omp parallel for
  for (int i = 0; i < N; i++) q[i] = q[i] + 2.0;
#pragma omp parallel for schedule(static, 100)
  for (int i = 0; i < N; i++) q[i] = q[i] * 2.0 - (i % 4);
  printf("q shared: %.3f\n", sum_of(q, N));

  /* The last region reads everything (every node fetches what others kept). */
  double total = 0;
#pragma omp parallel for reduction(+ : total)
  for (int i = 0; i < N; i++) total += x[i] + z[N - 1 - i] + q[(i + 7) % N];
  printf("total %.3f\n", total);
  free(x);
  free(y);
  free(z);
  free(q);
  return 0;
}
