/* Sparse writes (tests/lazy/sparse_paths.sh): each region writes one word in every page of
 * a large block, in `single` (the master) and in a loop whose iterations are a page apart
 * (every node), and every node then reads every page in its sequential part. Under
 * --sync=lazy such pages travel as their words, as under eager: fetched whole, each would
 * cost a round trip for 8 bytes. Compared with gcc -fopenmp's output. */
#include <stdio.h>

#define PAGES 1024
#define STRIDE (4096 / sizeof(long))
static long a[PAGES * STRIDE], b[PAGES * STRIDE];

int main(void) {
  long total = 0;
  for (int round = 1; round <= 10; round++) {
#pragma omp parallel
    {
#pragma omp single
      for (int p = 0; p < PAGES; p++) a[p * STRIDE + round] = p * round;
#pragma omp for
      for (int p = 0; p < PAGES; p++) b[p * STRIDE + round % 7] = p + round;
    }
    for (int p = 0; p < PAGES; p++) total += a[p * STRIDE + round] + b[p * STRIDE + round % 7];
  }
  printf("total %ld\n", total);
  return 0;
}
