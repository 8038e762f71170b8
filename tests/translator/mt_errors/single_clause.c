/* expect: 9:20: error: clause 'firstprivate' on 'omp single' is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
  int x = 1, y = 0;
#pragma omp parallel
  {
    /* single's own data sharing: not yet under the two-level model */
#pragma omp single firstprivate(x)
    y = x + 1;
  }
  printf("%d\n", y);
  return 0;
}
