/* Trap-free re-entry of leased locks (docs/critical.md, "Trap-free re-entry"): a slave that
 * keeps a lease re-enters bodies with known writes without a trap (a CAS on a word it shares
 * with its monitor, the targets logged). Here: many re-entries of one critical, of an atomic
 * per location and of a critical whose targets overflow the log (more than 64 distinct); a
 * lease asked back while its holder computes for a long time without any runtime call (the
 * asker must still get every write, by the holder's next call at the latest); all threads on
 * one lock (under --model=mt a node's threads find the word taken and wait at a trap).
 * Every figure printed is independent of the order the threads got the locks. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

long total, spread[100], slots[4], counter, seen, spin_sum, all_total, ready;

int main(void) {
  int threads = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t == 0) threads = omp_get_num_threads();
    for (int k = 0; k < 300; k++) {
#pragma omp critical
      total += k + t;
#pragma omp critical(spread)
      spread[(k * 7 + t) % 100] += 1;
#pragma omp atomic
      slots[k % 4] += t + 1;
    }
  }
  long s = 0;
  for (int i = 0; i < 100; i++) s += spread[i] * (i + 1);
  printf("threads %d total %ld spread %ld slots %ld %ld %ld %ld\n", threads, total, s, slots[0], slots[1], slots[2],
         slots[3]);

  /* Thread 1 takes `counter` 50 times (its node keeps the lease: 49 entries without a trap),
   * says so under critical(flag), then computes 0.3 s without a runtime call; the last thread
   * waits for that flag (polling it under the same lock, 1 ms apart: the only way a node sees
   * another's write within a region) and asks for `counter` meanwhile. So the asker's body
   * comes after thread 1's 50 whatever the load (it used to sleep 150 ms, and at load 20+
   * thread 1 sometimes started later: a valid order, not gcc's); its request, and the flag's
   * (bodies' writes logged), still reach thread 1 while it computes. */
#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 1) {
      for (int k = 0; k < 50; k++) {
#pragma omp critical(counter)
        counter += 2;
      }
#pragma omp critical(flag)
      ready = 1;
      double t0 = omp_get_wtime();
      long x = 0;
      while (omp_get_wtime() - t0 < 0.3) x++;
      spin_sum = x > 0;
    }
    if (t == n - 1 && n > 2) {
      long go = 0;
      for (int polls = 0; !go && polls < 30000; polls++) {  /* (30 s at most: a bound, not a timing) */
#pragma omp critical(flag)
        go = ready;
        if (!go) usleep(1000);
      }
#pragma omp critical(counter)
      {
        seen = counter;
        counter += 1000;
      }
    }
  }
  printf("counter %ld seen %s spun %ld\n", counter, threads <= 2 || seen == 100 ? "ok" : "WRONG", spin_sum);

  /* Everybody on one lock, again and again. */
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    for (int k = 0; k < 500; k++) {
#pragma omp critical(all)
      all_total += t + k;
    }
  }
  printf("all %ld\n", all_total);
  return 0;
}
