/* Issue 12's repro: the pragma inside `#ifdef _OPENMP` (cape-cc translates the
 * preprocessed unit, so the `#endif` is no longer lost). */
#include <stdio.h>
int main(void) {
  int i; double a[10];
#ifdef _OPENMP
#pragma omp parallel for
#endif
  for (i = 0; i < 10; i++) a[i] = i;
  printf("%g\n", a[9]);
  return 0;
}
