/* default(none) with every variable listed, and explicit shared/private clauses. */
#include <stdio.h>

#define N 200
double a[N], b[N];

int main(void) {
  double alpha = 2.5, tmp = 0;
  int n = N, i;
  for (i = 0; i < n; i++) b[i] = i * 0.5;
#pragma omp parallel for default(none) shared(a, b, alpha, n) private(tmp)
  for (i = 0; i < n; i++) {
    tmp = alpha * b[i];
    a[i] = tmp + 1.0;
  }
  double s = 0;
#pragma omp parallel default(shared)
  {
#pragma omp for reduction(+: s)
    for (int k = 0; k < n; k++) s += a[k];
  }
  printf("a[7] %.2f a[199] %.2f s %.2f tmp %.1f\n", a[7], a[199], s, tmp);
  return 0;
}
