/* expect: 8:13: error: 'omp ordered' is not supported with --model=mt yet */
#include <stdio.h>

int main(void) {
#pragma omp parallel for ordered
  for (int i = 0; i < 8; i++) {
    int v = i * i;
#pragma omp ordered
    printf("%d\n", v);
  }
  return 0;
}
