/* Pragmas in dead preprocessor branches are not directives: gcc ignores them, so does
 * cape-cc (a `critical` or `task` there would be refused if it were live). */
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define N 1000
static long v[N];
int main(void) {
  long s = 0;
  int i;
#if 0
#pragma omp parallel for ordered
  for (i = 0; i < N; i++) {
#pragma omp critical
    s += i;
  }
#endif
#ifndef _OPENMP
#pragma omp task
  s = -1;
#else
#pragma omp parallel for reduction(+: s)
#endif
  for (i = 0; i < N; i++) { v[i] = 3 * i; s += v[i]; }
#if defined(_OPENMP) && _OPENMP >= 200805
#pragma omp parallel for
#elif 1
#pragma omp taskloop
#endif
  for (i = 0; i < N; i++) v[i] += 1;
  long t = 0;
  for (i = 0; i < N; i++) t += v[i];
  printf("s=%ld t=%ld openmp=%d\n", s, t,
#ifdef _OPENMP
         1
#else
         0
#endif
  );
  return 0;
}
