/* Locals of the region's function that the region never names, written under a lock through
 * a pointer (`long *pc = &count;` then `*pc += v`), an array reached through another name,
 * and a lock-API counter behind a pointer. OpenMP shares them; before session 9 cape kept
 * each node's lock writes to them on that node (a total of 145 for gcc's 435, no warning). */
#include <omp.h>
#include <stdio.h>

static void add_to(long *where, long v) { *where += v; }

int main(void) {
  long count = 0;
  long *pc = &count;
  long hist[4] = {0, 0, 0, 0};
  long *h = hist;
  long locked = 0;
  long *pl = &locked;
  omp_lock_t lock;
  omp_init_lock(&lock);
#pragma omp parallel for
  for (int i = 0; i < 3000; i++)
    if (i % 100 == 0) {
#pragma omp critical
      *pc += i / 100;
#pragma omp critical(hist)
      h[i / 100 % 4] += i;
      omp_set_lock(&lock);
      add_to(pl, 1);
      omp_unset_lock(&lock);
    }
  omp_destroy_lock(&lock);
  printf("count %ld hist %ld %ld %ld %ld locked %ld\n", count, hist[0], hist[1], hist[2], hist[3], locked);
  return 0;
}
