/* expect: 8:13: error: 'omp critical' is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
  int n = 0;
#pragma omp parallel
  {
#pragma omp critical
    n++;
  }
  printf("%d\n", n);
  return 0;
}
