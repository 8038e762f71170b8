/* A function's static buffer, first reached inside a region (each iteration writes through the
   pointer the function returns): under TICKPT it travels since session 15 (an address constant in
   the section cape_cc_static_locals; main's build printed 561 for gcc's 4950 on 3 nodes). */
#include <stdio.h>
static double *buf(void) { static double b[100]; return b; }
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 100; i++) buf()[i] = i;
  double s = 0;
  for (int i = 0; i < 100; i++) s += buf()[i];
  printf("sum %g\n", s);
  return 0;
}
