/* --sync=lazy, a page asked for after its owner wrote it again (tests/lazy; docs/monitor.md,
 * "Lazy synchronisation", "The publishing copy"). A node that alone wrote a page in a region
 * keeps it and is asked for it later, at the version the region left (the list names it).
 * Its program may have written the page again by then: in its own sequential part (which
 * every node runs, at its own pace) or in the next region (a node starts it as soon as it
 * has the last merge: nothing waits for the others' sequential parts). Serving the page as
 * memory holds it then is a silent wrong result; these regions make that likely:
 *   a  the sequential part rewrites every page (a[i] = 3 a[i] + 1) in an order that jumps
 *      between the nodes' blocks (one fetch per page, no read-ahead): the owner of a page
 *      rewrites it while the others still fetch it; then a region reads other blocks;
 *   c  the sequential part only reads (a weighted sum, in the same order), the next region
 *      rewrites each block from that sum: an owner that finishes early rewrites pages the
 *      others have not fetched yet;
 *   d  as c, then every node writes every page (schedule(static, 1)): the merge needs the
 *      kept page's version before that region as its base.
 * c and d take fresh pages each round: a page read once travels eagerly from then on (the
 * readers' working set), and would no longer be fetched late.
 * Each result is printed; gcc -fopenmp's output must be matched. */
#include <stdio.h>
#include <stdlib.h>

#define PAGE_DOUBLES 512
#define PAGES 192
#define N (PAGES * PAGE_DOUBLES)
#define STRIDE 7 /* pages; prime to PAGES: every page once, never two neighbours in a row */

static double checksum(const double *v) {
  double s = 0;
  for (int i = 0; i < N; i++) s += v[i] * (double)(i % 13 + 1);
  return s;
}

/* Every page of v once, jumping STRIDE pages each time. */
static void rewrite_jumping(double *v) {
  for (int k = 0; k < PAGES; k++) {
    double *p = v + (long)((k * STRIDE) % PAGES) * PAGE_DOUBLES;
    for (int j = 0; j < PAGE_DOUBLES; j++) p[j] = 3.0 * p[j] + 1.0;
  }
}

static double sum_jumping(const double *v) {
  double s = 0;
  for (int k = 0; k < PAGES; k++) {
    const double *p = v + (long)((k * STRIDE) % PAGES) * PAGE_DOUBLES;
    for (int j = 0; j < PAGE_DOUBLES; j++) s += p[j] * (double)(j % 5 + 1);
  }
  return s;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 4;
  double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
  double *cs = malloc(sizeof(double) * N * rounds), *ds = malloc(sizeof(double) * N * rounds);
  if (!a || !b || !cs || !ds) return 1;
  for (int i = 0; i < N; i++) a[i] = b[i] = 0;
  for (long i = 0; i < (long)N * rounds; i++) cs[i] = ds[i] = 0;

  for (int round = 0; round < rounds; round++) {
    double *c = cs + (long)round * N, *d = ds + (long)round * N;
    /* a: each node its block, then every node rewrites every page in its sequential part. */
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = 0.5 * i + round;
    rewrite_jumping(a);
#pragma omp parallel for
    for (int i = 0; i < N; i++) b[i] = a[(i + N / 3 + round * (N / 5)) % N] - a[N - 1 - i];
    printf("a %d: %.3f\n", round, checksum(b));

    /* c: read late in the sequential part, rewritten by its owners in the next region. */
#pragma omp parallel for
    for (int i = 0; i < N; i++) c[i] = i + 7.0 * round;
    double s = sum_jumping(c);
#pragma omp parallel for
    for (int i = 0; i < N; i++) c[i] = 0.5 * c[i] + s / N;
    printf("c %d: %.6f %.3f\n", round, s, checksum(c));

    /* d: as c, then every node writes words of every page (the merge's base). */
#pragma omp parallel for
    for (int i = 0; i < N; i++) d[i] = 2.0 * i - round;
    double t = sum_jumping(d);
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < N; i++) d[i] = d[i] * 0.25 + t / N + (i % 3);
    printf("d %d: %.6f %.3f\n", round, t, checksum(d));
  }
  free(a), free(b), free(cs), free(ds);
  return 0;
}
