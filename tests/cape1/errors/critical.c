/* expect: 9:13: error: 'omp critical' is not supported by --model=cape1 */
#include <stdio.h>

int main(void) {
  int n = 0;
#pragma omp parallel
  {
    int t = 1;
#pragma omp critical
    n += t;
  }
  printf("%d\n", n);
  return 0;
}
