//@ refuse: 'omp taskgroup' is not supported|'omp taskloop' is not supported
#include <omp.h>
#include <stdio.h>
int out[100];
int main(void) {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
  {
#pragma omp taskloop grainsize(10)
    for (int k = 0; k < 100; k++) out[k] = k;
  }
  int s = 0; for (int k = 0; k < 100; k++) s += out[k];
  printf("s %d\n", s);
  return 0;
}
