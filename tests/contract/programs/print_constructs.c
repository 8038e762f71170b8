/* Printing inside `single`, `master`, `sections` (in a `parallel` region and as
 * `parallel sections`) and a worksharing `for` inside `parallel`, on stdout and stderr, and
 * many lines from one node (a `single` printing 5000 lines). Sorted lines equal native's. */
#include <stdio.h>
#include <omp.h>

int main(void) {
  printf("start\n");
#pragma omp parallel
  {
#pragma omp single
    {
      for (int k = 0; k < 3; k++) printf("single line %d\n", k);
      fprintf(stderr, "single on stderr\n");
    }
#pragma omp master
    {
      printf("master line, thread %d\n", omp_get_thread_num());
      fprintf(stderr, "master on stderr\n");
    }
#pragma omp barrier
#pragma omp sections
    {
#pragma omp section
      printf("section A\n");
#pragma omp section
      printf("section B\n");
#pragma omp section
      fprintf(stderr, "section C on stderr\n");
#pragma omp section
      printf("section D\n");
    }
#pragma omp for schedule(static)
    for (int i = 0; i < 12; i++) printf("for inside parallel: %d on thread %d\n", i, omp_get_thread_num());
  }
  printf("between\n");
#pragma omp parallel sections
  {
#pragma omp section
    printf("parallel sections 1\n");
#pragma omp section
    {
      printf("parallel sections 2\n");
      fprintf(stderr, "parallel sections 2 on stderr\n");
    }
#pragma omp section
    printf("parallel sections 3\n");
  }
  long total = 0;
#pragma omp parallel
  {
#pragma omp single
    for (int k = 0; k < 5000; k++) printf("many from single %d\n", k);
#pragma omp for reduction(+ : total)
    for (int i = 0; i < 100; i++) total += i;
  }
  printf("end %ld\n", total);
  return 0;
}
