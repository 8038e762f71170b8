/* A block realloc'd larger in `single` every round (the cape heap grows by mprotect, so its
 * mapping is split where each round's growth began), written by every node in a `for`, then
 * read sequentially by every node's sequential part: the pages the slaves kept are fetched
 * in runs of 1, 2, 4 .. pages, and a run that crosses one of those mapping ends must still
 * be installed (UFFDIO_COPY stays inside one mapping). A list built in `master` and freed at
 * the end. Compared with gcc -fopenmp's output (tests/lazy/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>

struct item {
  struct item *next;
  int v;
};

int main(void) {
  double *a = NULL, total = 0;
  int n = 0;
  struct item *head = NULL;
  for (int round = 1; round <= 6; round++) {
#pragma omp parallel
    {
#pragma omp single
      {
        n = 5000 * round;
        a = realloc(a, (size_t)n * sizeof *a);
      }
#pragma omp for
      for (int i = 0; i < n; i++) a[i] = i * 0.5 + round;
#pragma omp master
      for (int k = 0; k < 10; k++) {
        struct item *it = malloc(sizeof *it);
        it->v = round * k;
        it->next = head;
        head = it;
      }
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    total += s;
  }
  long l = 0;
  int c = 0;
  while (head) {
    struct item *x = head;
    head = x->next;
    l += x->v;
    c++;
    free(x);
  }
  free(a);
  printf("total %.1f list %d %ld\n", total, c, l);
  return 0;
}
