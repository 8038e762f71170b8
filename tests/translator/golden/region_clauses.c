#include <stdio.h>
static int counter;
#pragma omp threadprivate(counter)
int a[64];
int main(void) {
  int x = 3, y = 0, last = 0, z = 0;
  long sum = 1;
  counter = 7;
#pragma omp parallel firstprivate(x) copyin(counter) reduction(+: sum)
  {
    int me = x + counter;
#pragma omp for reduction(max: y) lastprivate(last)
    for (int i = 0; i < 64; i++) {
      a[i] = me + i;
      if (a[i] > y) y = a[i];
      last = i;
    }
#pragma omp sections lastprivate(z)
    {
#pragma omp section
      z = 1;
#pragma omp section
      z = 2;
    }
#pragma omp single copyprivate(me)
    me = 42;
    sum += me;
  }
  printf("%ld %d %d %d %d\n", sum, y, last, x, z);
  return 0;
}
