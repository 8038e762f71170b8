//@ refuse: 'omp task' is not supported
/* task/taskwait in a single: gcc accepts; cape must refuse at file:line:col. */
#include <omp.h>
#include <stdio.h>
int out[8];
int main(void) {
#pragma omp parallel
#pragma omp single
  {
    for (int k = 0; k < 8; k++) {
#pragma omp task firstprivate(k)
      out[k] = k * k;
    }
#pragma omp taskwait
  }
  int s = 0; for (int k = 0; k < 8; k++) s += out[k];
  printf("s %d\n", s);
  return 0;
}
