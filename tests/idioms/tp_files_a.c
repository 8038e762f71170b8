//@ extra: tp_files_b.c
/* threadprivate variables the regions cannot see: one declared in the other
 * file (with its functions there) and a function's own static. Each thread's
 * copy must persist from region to region, and the master's is the sequential
 * part's. */
#include <omp.h>
#include <stdio.h>
void add(int v);
int get(void);
int tick(void);
int main(void) {
#pragma omp parallel
  { add(omp_get_thread_num() * 10 + 1); tick(); }
#pragma omp parallel
  { add(1); tick(); }
  int seq = tick();
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    int k = tick();
#pragma omp critical
    printf("thread %d tp %d ticks %d\n", t, get(), k);
  }
  printf("master tp %d ticks %d seq %d\n", get(), tick(), seq);
  return 0;
}
