#include <omp.h>
int a[100], who[8];
void f(int n) {
#pragma omp parallel private(n)
  {
    n = omp_get_thread_num();
#pragma omp for nowait
    for (int i = 99; i >= 0; i -= 2) a[i] = i;
#pragma omp single
    who[0] = n;
#pragma omp master
    who[1] = 1;
#pragma omp barrier
  }
}
