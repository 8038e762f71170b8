/* expect: 5:13: error: 'omp threadprivate' is not supported with --model=mt yet */
#include <stdio.h>

static int counter;
#pragma omp threadprivate(counter)

int main(void) {
#pragma omp parallel
  counter++;
  printf("%d\n", counter);
  return 0;
}
