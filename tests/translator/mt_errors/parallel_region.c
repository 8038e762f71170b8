/* expect: 7:13: error: 'omp parallel' is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
  int x = 0;
  /* a plain region: refused under the two-level model until it has its template */
#pragma omp parallel
  x++;
  printf("%d\n", x);
  return 0;
}
