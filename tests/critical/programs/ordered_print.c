/* Ordered printing in a `parallel for ordered` (chunks of one iteration: the token passes
 * between nodes at every iteration, and blocks of 3), and a value folded in iteration order
 * (not commutative: any other order gives another number). */
#include <omp.h>
#include <stdio.h>

int main(void) {
#pragma omp parallel for ordered schedule(static, 1)
  for (int i = 0; i < 10; i++) {
    int sq = i * i;
#pragma omp ordered
    printf("iteration %d square %d\n", i, sq);
  }
  long fold = 1;
#pragma omp parallel for ordered schedule(static, 3)
  for (int i = 0; i < 17; i++) {
#pragma omp ordered
    {
      fold = (fold * 31 + i) % 1000003;
      printf("fold %d %ld\n", i, fold);
    }
  }
  printf("fold %ld\n", fold);
  /* A region's `for ordered`, static schedule without a chunk. */
#pragma omp parallel
  {
#pragma omp for ordered
    for (int i = 0; i < 8; i++) {
#pragma omp ordered
      printf("region %d\n", i);
    }
  }
  return 0;
}
