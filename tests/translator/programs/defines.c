/* -D and -I reach the preprocessing (e2e.sh gives them to both compilers); a directive
 * inside a user header is translated there. */
#include <stdio.h>
#include "params.h"
double v[N];
int main(void) {
  int i;
  for (i = 0; i < N; i++) v[i] = i;
  scale(v, N, 3.0);
  double s = 0;
#pragma omp parallel for reduction(+: s)
  for (i = 0; i < N; i++) s += v[i];
#ifdef EXTRA
  printf("extra %d\n", EXTRA);
#endif
  printf("%.1f\n", s);
  return 0;
}
