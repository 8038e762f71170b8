//@ extra: tp_files_b.c
/* threadprivate variables the regions cannot see: one declared in the other
 * file (with its functions there) and a function's own static. Each thread's
 * copy must persist from region to region, and the master's is the sequential
 * part's. (Under --model=mt a slave node's thread 0 is its main thread, which
 * runs the sequential part: not run there, docs/translator.md.) */
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
  int res[64][2], nt = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    int k = tick();
    res[t][0] = get();
    res[t][1] = k;
#pragma omp single
    nt = omp_get_num_threads();
  }
  for (int t = 0; t < nt; t++) printf("thread %d tp %d ticks %d\n", t, res[t][0], res[t][1]);
  printf("master tp %d ticks %d seq %d\n", get(), tick(), seq);
  return 0;
}
