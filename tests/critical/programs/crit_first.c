/* First entries of locks by the slaves while the master waits for their parts (docs/critical.md,
 * "Session 13": the slave's grant spin and the master's wait spin): every region, each thread
 * but the master's takes an atomic on a location no node used before (a new lock: request,
 * grant, lease) and the one critical, which the previous holder keeps as a lease or a renewal
 * (so it is taken from another slave), then an omp lock (the general path: no known writes).
 * The sums do not depend on the order. */
#include <omp.h>
#include <stdio.h>

enum { kRegions = 24, kCells = 256 };
long cells[kCells], total, locked;
omp_lock_t lock;

int main(void) {
  omp_init_lock(&lock);
  for (int r = 0; r < kRegions; r++) {
#pragma omp parallel
    {
      int t = omp_get_thread_num();
      if (t > 0) {
#pragma omp atomic
        cells[(r * 8 + t) % kCells] += t + 1;
#pragma omp critical
        total += (long)(r + 1) * t;
        omp_set_lock(&lock);
        locked += t * t;
        omp_unset_lock(&lock);
      }
    }
  }
  omp_destroy_lock(&lock);
  long s = 0;
  for (int i = 0; i < kCells; i++) s += cells[i] * (i + 1);
  printf("total %ld cells %ld locked %ld\n", total, s, locked);
  return 0;
}
