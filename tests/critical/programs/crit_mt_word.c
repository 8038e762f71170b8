/* Two threads of one node on one lock that the node keeps (a lease: the master's in the first
 * region, a slave's in the second), entering bodies with known writes again and again: under
 * --model=mt (2 threads per node: threads 0-1 are the master's, 2-3 slave 1's) one of them finds
 * the trap-free word taken by the other (INSIDE) over and over and traps; when the other's body
 * still runs as the monitor serves that trap, the call waits, parked, until the other's exit,
 * which then traps too (docs/critical.md, "Trap-free re-entry"; counted in --log calls:info's
 * "entries found the word taken by another thread", which critical.lease_paths checks). Without --model=mt the same threads are on different nodes
 * and contend across them. Each body first-touches a page of its own (microseconds in the
 * kernel), so that most of a thread's loop is spent inside bodies: whenever the scheduler
 * switches between the two threads (they may share a CPU), the other one most likely finds
 * the word taken. critical.lease_paths builds it with -DBODIES=1600 (on a quiet machine the
 * two threads of a node, which share its CPU, were never switched inside a body with 800 and
 * session 11's shorter entries: lease_paths failed in a quiet CI run; 1600 met in 4 of 4
 * runs); elsewhere 800, since under the `full` tracker (critical.trackers) every entry diffs
 * the whole 25 MiB and 1600 ran past the job's 120 s under load. The sums are independent of
 * the order. */
#ifndef BODIES
#define BODIES 800
#endif
#include <omp.h>
#include <stdio.h>

long hot, cold, big[4 * BODIES * 512]; /* 25 MiB of .bss: each body writes a page of its own */
long arrived[2];

/* Both threads of a node start their loops together: under --model=mt they meet here; on
 * different nodes (one thread each) each goes on after 50 ms (both write the same value). */
static void meet(long *at) {
  __atomic_fetch_add(at, 1, __ATOMIC_SEQ_CST);
  double t0 = omp_get_wtime();
  while (__atomic_load_n(at, __ATOMIC_SEQ_CST) < 2 && omp_get_wtime() - t0 < 0.05) {
  }
}


int main(void) {
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t < 2) meet(&arrived[0]);
    if (t < 2)
      for (int k = 0; k < BODIES; k++) {
        long at = (t * BODIES + k) * 512L;
#pragma omp critical(hot)
        {
          hot += t + 1;
          big[at] = k + 1;
        }
      }
  }
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t == 2 || t == 3) meet(&arrived[1]);
    if (t == 2 || t == 3)
      for (int k = 0; k < BODIES; k++) {
        long at = (t * BODIES + k) * 512L;
#pragma omp critical(cold)
        {
          cold += t;
          big[at] = k + 2;
        }
      }
  }
  long sum = 0;
  for (long i = 0; i < 4 * BODIES * 512; i += 512) sum += big[i] * (i / 512 % 7 + 1);
  printf("hot %ld cold %ld big %ld\n", hot, cold, sum);
  return 0;
}
