/* Counters behind omp_set_lock: a local of main and a global under one lock, a nest lock
 * taken twice, omp_test_lock in a loop, and a lock taken in a function the loop calls. */
#include <omp.h>
#include <stdio.h>

long hits;
long table[4];
omp_lock_t table_lock;

static void add(int slot, long v) {
  omp_set_lock(&table_lock);
  table[slot] += v;
  omp_unset_lock(&table_lock);
}

int main(void) {
  omp_lock_t lock;
  omp_nest_lock_t nl;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nl);
  omp_init_lock(&table_lock);
  long counter = 0, nested = 0;
  int tested = 0;
#pragma omp parallel
  {
    for (int k = 0; k < 4; k++) {
      omp_set_lock(&lock);
      counter += k + 1;
      hits++;
      omp_unset_lock(&lock);
    }
    omp_set_nest_lock(&nl);
    omp_set_nest_lock(&nl);
    nested += 2;
    omp_unset_nest_lock(&nl);
    omp_unset_nest_lock(&nl);
    while (!omp_test_lock(&lock)) {
    }
    tested++;
    omp_unset_lock(&lock);
  }
#pragma omp parallel for
  for (int i = 0; i < 20; i++) add(i % 4, i);
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nl);
  omp_destroy_lock(&table_lock);
  printf("counter %ld hits %ld nested %ld tested %d\n", counter, hits, nested, tested);
  for (int s = 0; s < 4; s++) printf("table[%d] = %ld\n", s, table[s]);
  return 0;
}
