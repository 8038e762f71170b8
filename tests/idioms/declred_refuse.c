//@ refuse: declare reduction|not supported
/* A user-defined reduction on a struct: cape must refuse it clearly. */
#include <omp.h>
#include <stdio.h>
typedef struct { long sum; int cnt; int mx; } acc_t;
#pragma omp declare reduction(accum : acc_t : omp_out.sum += omp_in.sum, omp_out.cnt += omp_in.cnt, omp_out.mx = omp_in.mx > omp_out.mx ? omp_in.mx : omp_out.mx) initializer(omp_priv = (acc_t){0, 0, -1})
int main(void) {
  acc_t a = {0, 0, -1};
#pragma omp parallel for reduction(accum : a)
  for (int i = 0; i < 1000; i++) { a.sum += i; a.cnt++; if (i % 333 > a.mx) a.mx = i % 333; }
  printf("%ld %d %d\n", a.sum, a.cnt, a.mx);
  return 0;
}
