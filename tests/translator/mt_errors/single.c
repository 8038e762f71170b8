/* expect: 8:13: error: 'omp single' is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp parallel for
  for (int i = 0; i < 4; i++) {
#pragma omp single
    x = i;
  }
  printf("%d\n", x);
  return 0;
}
