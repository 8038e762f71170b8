//@ args: -m 3 -v
//@ stdin: qsort_stdin.in
//@ env: IDIOM_TAG=sorted
/* argv parsing and scanf from stdin before the region, getenv, qsort in
 * single, a parallel for over the sorted data, binary search after. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { int x = *(const int *)a, y = *(const int *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
  int mult = 1, verbose = 0;
  for (int k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "-m") && k + 1 < argc) mult = atoi(argv[++k]);
    else if (!strcmp(argv[k], "-v")) verbose = 1;
  }
  const char *tag = getenv("IDIOM_TAG");
  int n = 0;
  if (scanf("%d", &n) != 1 || n <= 0 || n > 100000) { fprintf(stderr, "bad n\n"); return 4; }
  int *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++) if (scanf("%d", &a[i]) != 1) { fprintf(stderr, "short input at %d\n", i); return 5; }
  long *pref = malloc(n * sizeof *pref);
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < n; i++) a[i] *= mult;
#pragma omp single
    qsort(a, n, sizeof *a, cmp);
#pragma omp for
    for (int i = 0; i < n; i++) pref[i] = (long)a[i] * (i + 1);
  }
  long s = 0; for (int i = 0; i < n; i++) s += pref[i];
  int key = a[n / 2];
  int *f = bsearch(&key, a, n, sizeof *a, cmp);
  printf("%s n %d min %d max %d med %d s %ld found %d\n", tag ? tag : "(no tag)", n, a[0], a[n - 1], key, s, f != NULL);
  if (verbose) for (int i = 0; i < 5 && i < n; i++) printf("a[%d] = %d\n", i, a[i]);
  free(a); free(pref);
  return 0;
}
