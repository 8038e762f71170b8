/* Output and input of an ordinary OpenMP program under cape (net/program_io.h): the
 * sequential part reads numbers from stdin on every node, a parallel region prints one line
 * per thread with the sum it sees, the sequential part prints before and after. */
#include <omp.h>
#include <stdio.h>

int main(void) {
  long sum = 0, x;
  int n = 0;
  while (scanf("%ld", &x) == 1) sum += x, n++;
  printf("read %d numbers\n", n);
#pragma omp parallel
  printf("thread %d of %d: sum %ld\n", omp_get_thread_num(), omp_get_num_threads(), sum);
  printf("done\n");
  return 0;
}
