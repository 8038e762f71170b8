#include <stdio.h>
#define N 1000
double a[N], b[N];
int main(void) {
  int i;
#pragma omp parallel for schedule(static, 8)
  for (i = 0; i < N; i++)
    a[i] = 2.0 * b[i];
  printf("%f\n", a[10]);
  return 0;
}
