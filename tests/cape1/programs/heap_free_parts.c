/* Every part frees the blocks of its iterations inside one step. Each part allocates from its
 * own arena of the cape heap between a region's fork and join, and defers its frees of arena 0's
 * blocks (translator/rt/cape1_cc.c): as gcc -fopenmp's. With CAPE1_PART_ARENAS=0 (all parts in
 * arena 0, as before session 15) the run must fail with a message naming the heap, never give a
 * wrong result (cape1.refused.heap_free_parts). */
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
