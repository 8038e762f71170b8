/* expect: 5:26: error: clause 'reduction' is not supported yet, see issue 6 */
#include <stdio.h>
int main(void) {
  double s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < 10; i++) s += i;
  printf("%g\n", s);
  return 0;
}
