/* expect: 6:13: error: 'omp ordered' is not supported by CAPE: ordered execution */
#include <stdio.h>
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 10; i++) {
#pragma omp ordered
    printf("%d\n", i);
  }
  return 0;
}
