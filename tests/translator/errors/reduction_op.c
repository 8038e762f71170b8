/* expect: 5:36: error: unknown reduction operator '/' */
#include <stdio.h>
int main(void) {
  double s = 1;
#pragma omp parallel for reduction(/: s)
  for (int i = 1; i < 10; i++) s /= i;
  printf("%g\n", s);
  return 0;
}
