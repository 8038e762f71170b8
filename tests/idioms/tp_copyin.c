/* threadprivate with copyin across regions; static locals and function
 * pointers in called functions. */
#include <omp.h>
#include <stdio.h>
static int counter;
double tpd[4];
#pragma omp threadprivate(counter, tpd)
typedef int (*op_t)(int);
static int twice(int v) { return 2 * v; }
static int sq(int v) { return v * v; }
static int neg(int v) { return -v; }
static op_t ops[3] = {twice, sq, neg};
static int apply(int k, int v) { return ops[k % 3](v); }
static int ticks(void) { static int calls_seen; return ++calls_seen; }
static int lookup(int i) { static const int tbl[5] = {3, 1, 4, 1, 5}; return tbl[i % 5]; }
int res[3000];
int main(void) {
  counter = 100; tpd[0] = 0.25;
#pragma omp parallel copyin(counter, tpd)
  {
    counter += omp_get_thread_num();
    tpd[1] = tpd[0] * (omp_get_thread_num() + 1);
  }
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < 3000; i++) res[i] = apply(i, lookup(i)) + counter % 100;
  }
  long s = 0; for (int i = 0; i < 3000; i++) s += res[i];
  printf("master counter %d tpd1 %.6g s %ld ticks %d\n", counter, tpd[1], s, ticks());
  counter = 5;
  ticks(); ticks();
#pragma omp parallel copyin(counter)
  {
    int t = omp_get_thread_num();
#pragma omp critical
    printf("thread %d counter %d\n", t, counter + t);
  }
  return 0;
}
