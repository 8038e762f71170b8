/* expect: 9:30: error: a reduction over an array on a worksharing construct inside a region is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
  int hist[4] = {0};
#pragma omp parallel
  {
    /* each thread would need its own copy of the array */
#pragma omp for reduction(+: hist)
    for (int i = 0; i < 100; i++) hist[i % 4] += i;
  }
  printf("%d\n", hist[0]);
  return 0;
}
