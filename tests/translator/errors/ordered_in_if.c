/* expect: 7:13: error: 'omp ordered' is not supported by CAPE: 'omp ordered' must be a statement of the loop body itself */
#include <stdio.h>
int main(void) {
#pragma omp parallel for ordered
  for (int i = 0; i < 10; i++) {
    if (i % 2)
#pragma omp ordered
      printf("%d\n", i);
  }
  return 0;
}
