/* Releases another node waits for (docs/critical.md, "Session 12": a slave sends them at once,
 * not from its heartbeat thread): every thread hammers a critical with known writes, one whose
 * body calls a function, an omp lock and an atomic, all at once (contended: the master hands the
 * locks on with plain grants, each release awaited); a lease asked back while its holder sleeps
 * inside the body (its exit's release is awaited, and carries every body of the lease: the asker
 * reads them all); an ordered loop (each block's release awaited
 * by the next ticket's node), folding a value in iteration order. Every figure printed is
 * independent of the order the threads got the locks, but the fold's, which is the loop's order. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define K 40
long sum, mixed, locked, hist[8], slow, seq_n, fold = 1, ring[5], ring_i, slots[4], chk;
int seq[4096];
omp_lock_t lk;

static long mix(int t, int k) { return (t + 1) * 7919 % 1000 + k * 3; }

int main(void) {
  int threads = 0;
  long local = 0;
  omp_init_lock(&lk);
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t == 0) threads = omp_get_num_threads();
    for (int k = 0; k < K; k++) {
#pragma omp critical
      {
        sum += (t + 1) * 1000 + k;
        local += k;
      }
#pragma omp critical(call)
      {
        mixed += mix(t, k);
        seq[seq_n++] = t;
        /* Each body adds to another slot than the last: a release must carry every body of a
         * lease, not only the last one's, or the next holder adds to a stale slot. */
        ring[ring_i++ % 5] += t + 1;
      }
      omp_set_lock(&lk);
      locked += t + k;
      omp_unset_lock(&lk);
#pragma omp atomic
      hist[k % 8] += t + 1;
    }
  }
  printf("threads %d sum %ld local %ld mixed %ld locked %ld entries %ld\n", threads, sum, local, mixed, locked, seq_n);
  for (int t = 0; t < threads; t++) {
    int c = 0;
    for (long i = 0; i < seq_n; i++) c += seq[i] == t;
    printf("thread %d entered %d times\n", t, c);
  }
  for (int b = 0; b < 8; b++) printf("hist[%d] = %ld\n", b, hist[b]);
  printf("ring %ld in %ld adds\n", ring[0] + ring[1] + ring[2] + ring[3] + ring[4], ring_i);

  /* Thread 1 (a slave) takes `slow` and sleeps inside; another thread asks meanwhile (a slave
   * on 3+ nodes, the master on 2): the lease is asked back inside, its exit's release awaited.
   * The asker acts only once thread 1's four re-entries are visible (it used to sleep 30 ms and
   * act at once: under load it legally came between two re-entries, "slow 11 chk 1", which
   * gcc could print too), so chk is 10 whichever of the two takes `slow` first. */
#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    int asker = n > 2 ? 2 : 0;
    if (t == 1) {
      for (int k = 0; k < 4; k++) {  /* re-entries of its lease, one slot each */
#pragma omp critical(slow)
        slots[k] = k + 1;
      }
#pragma omp critical(slow)
      {
        slow += 1;
        usleep(100000);
        slow += 10;
      }
    }
    if (t == asker && n > 1) {
      usleep(30000);
      for (int done = 0; !done;) {
#pragma omp critical(slow)
        if (slots[3]) {
          slow *= 100;
          chk = slots[0] + slots[1] + slots[2] + slots[3];  /* every body of the lease */
          done = 1;
        }
        if (!done) usleep(1000);
      }
    }
  }
  if ((slow == 1100 || slow == 11) && chk == 10)  /* (holder first, or the asker) */
    printf("slow: one order or the other\n");
  else
    printf("slow %ld chk %ld\n", slow, chk);

#pragma omp parallel for ordered schedule(static, 1)
  for (int i = 0; i < 24; i++) {
    long sq = (long)i * i;
#pragma omp ordered
    fold = (fold * 31 + sq) % 1000003;
  }
  printf("fold %ld\n", fold);
  omp_destroy_lock(&lk);
  return 0;
}
