#include <stdio.h>
int a[10];
int main(void) {
  int s = 0;
#ifdef NATIVE
  /* a comment before the pragma */
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < 10; i++) s += a[i] = i;
#else
  for (int i = 0; i < 10; i++) s += a[i] = 2 * i;
#endif
  printf("%d %d\n", a[9], s);
  return 0;
}
