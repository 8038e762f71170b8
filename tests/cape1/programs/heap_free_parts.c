/* Every part frees the blocks of its iterations inside one step: under CAPE-1 the parts all use
 * the cape heap's arena 0, whose state two parts change differently. Not supported: the run must
 * fail with a message naming the heap (docs/cape1.md), never give a wrong result. */
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n = 64; int **v = 0; long s = 0;
#pragma omp parallel
  {
#pragma omp single
    { v = malloc(n * sizeof *v); for (int i = 0; i < n; i++) { v[i] = malloc(100 * sizeof(int)); v[i][0] = i; } }
#pragma omp for reduction(+:s)
    for (int i = 0; i < n; i++) { s += v[i][0]; free(v[i]); }
  }
  printf("s %ld\n", s);
  free(v);
  return 0;
}
