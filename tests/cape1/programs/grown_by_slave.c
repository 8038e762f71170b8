/* Memory allocated inside a region by one part, used by every part after a barrier: the
 * list is built in the *second* section (part 1 under CAPE-1 with 2+ parts: a slave's heap
 * growth must reach the master and the other slaves; one part allocates per step, as two
 * parts' allocations are a merge conflict: docs/cape1.md), a table filled in the first, then
 * a `for` and a `single` over both. Every line printed inside the region must reach stdout. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
struct item { long v; struct item* next; };
int main(void) {
  struct item* list = 0;
  long sum = 0;
  int n = 3000;
  long* table = malloc(n * sizeof *table);
#pragma omp parallel reduction(+ : sum)
  {
#pragma omp sections
    {
#pragma omp section
      {
        for (int i = 0; i < n; i++) table[i] = 3 * i;
        printf("table built\n");
      }
#pragma omp section
      {
        for (int i = 0; i < n; i++) {
          struct item* p = malloc(sizeof *p + 64 * (i % 5));
          p->v = i;
          p->next = list;
          list = p;
        }
        printf("list built\n");
      }
    }
#pragma omp for
    for (int i = 0; i < n; i++) table[i] += 1;
#pragma omp single
    {
      for (struct item* p = list; p; p = p->next) sum += p->v;
      printf("list walked\n");
    }
#pragma omp for
    for (int i = 0; i < n; i++) sum += table[i];
  }
  printf("sum %ld first %ld last %ld\n", sum, table[0], table[n - 1]);
  return 0;
}
