/* Output printed inside regions by every part: a `for` whose iterations print, a `single`,
 * stderr, and the sequential part between regions.
 * Compared as a set of lines with gcc -fopenmp (the order across nodes may differ, as
 * across threads). */
#include <omp.h>
#include <stdio.h>
int main(void) {
  printf("before\n");
#pragma omp parallel for
  for (int i = 0; i < 12; i++) printf("iteration %d squared %d\n", i, i * i);
  printf("between\n");
#pragma omp parallel
  {
#pragma omp single
    printf("single\n");
#pragma omp for
    for (int i = 0; i < 6; i++) fprintf(stderr, "stderr %d\n", i);
  }
  printf("after\n");
  return 0;
}
