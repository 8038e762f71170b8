/* omp_get_num_threads() counted under critical inside parallel; criticals on both sides of
 * a barrier. */
#include <omp.h>
#include <stdio.h>

int main(void) {
  int count = 0, seen = 0;
#pragma omp parallel
  {
#pragma omp critical
    {
      count++;
      if (omp_get_num_threads() > seen) seen = omp_get_num_threads();
    }
  }
  printf("threads %d counted %d\n", seen, count);

  int rounds = 0;
#pragma omp parallel
  {
#pragma omp critical
    rounds++;
#pragma omp barrier
#pragma omp critical
    rounds += 10;
  }
  printf("rounds %d\n", rounds);
  return 0;
}
