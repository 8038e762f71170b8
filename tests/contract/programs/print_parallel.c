/* Issue 10 case 1: printing inside a `parallel` region. Every thread's line must appear once,
 * whole, on `cape run`'s stdout (and stderr), as with gcc -fopenmp: the test compares the
 * sorted lines. The sequential part's lines appear once. */
#include <stdio.h>
#include <omp.h>

int main(void) {
  printf("before the first region\n");
  fprintf(stderr, "stderr before the first region\n");
#pragma omp parallel
  {
    printf("hello from thread %d of %d\n", omp_get_thread_num(), omp_get_num_threads());
    fprintf(stderr, "stderr hello from thread %d of %d\n", omp_get_thread_num(), omp_get_num_threads());
  }
  int a[64];
#pragma omp parallel for
  for (int i = 0; i < 64; i++) a[i] = i * i;
  long s = 0;
  for (int i = 0; i < 64; i++) s += a[i];
  printf("between the regions %ld\n", s);
#pragma omp parallel
  printf("second region, thread %d\n", omp_get_thread_num());
  printf("after the last region\n");
  fprintf(stderr, "stderr after the last region\n");
  return 0;
}
