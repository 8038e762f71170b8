/* Directives made by the preprocessor: _Pragma in a macro, a stringified pragma, macros
 * in clauses (OpenMP: `#pragma omp` lines are macro-expanded). */
#include <stdio.h>
#define N 997
#define CHUNK 16
#define NT 64
#define PRAGMA(x) _Pragma(#x)
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static, CHUNK)")
#define SUM_INTO(v) PRAGMA(omp parallel for reduction(+: v))
static double a[N], b[N];
int main(void) {
  int i;
  double s = 0;
  PARALLEL_FOR
  for (i = 0; i < N; i++) a[i] = 0.5 * i;
#pragma omp parallel for num_threads(NT) schedule(static, CHUNK / 4)
  for (i = 0; i < N; i++) b[i] = a[i] + i;
  SUM_INTO(s)
  for (i = 0; i < N; i++) s += b[i];
  _Pragma("omp parallel for") for (i = 0; i < N; i++) a[i] = -a[i];
  printf("%.1f %.1f %.1f\n", s, a[N - 1], b[N / 2]);
  return 0;
}
