#include <stdio.h>
#define N 100
double a[N], b[N];
int main(void) {
  int i, last = -1, k = 10;
  double s = 0.5, scale = 2.0, t;
#pragma omp parallel for default(none) shared(a, b) private(t) firstprivate(scale, k) lastprivate(i, last) reduction(+: s)
  for (i = 0; i < N; i++) {
    t = scale * b[i] + k;
    a[i] = t;
    s += t;
    last = i;
  }
  printf("%f %d %d\n", s, i, last);
  return 0;
}
