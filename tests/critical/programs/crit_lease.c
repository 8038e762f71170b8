/* Lock leases (docs/critical.md, "Lock leases"): a node keeps a lock nobody else asked for
 * and re-enters it without asking; another node asking gets it back, at once when the
 * holder is outside its body, at the body's exit when inside. Here: every thread
 * alternating on one critical, a lease held idle while another node asks and one asked back
 * while its holder sleeps inside the body, a lease held at a region's end and the lock used
 * again in the next region, nested named criticals, a lock and an atomic capture taken again
 * and again. Every figure printed is independent of the order the threads got the locks. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

long total, known_total, held, carry, outer, inner, lock_total, ticket, ticket_sum;
int seq[4096];
long seq_n;
omp_lock_t lk;

int main(void) {
  int threads = 0;
  omp_init_lock(&lk);
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t == 0) threads = omp_get_num_threads();
    for (int k = 0; k < 50; k++) {
#pragma omp critical
      {
        total += t * 1000 + k;
        seq[seq_n++] = t;
      }
#pragma omp critical(known)
      known_total += k + 1;
      if (k % 7 == t % 7) usleep(50);  // who asks when varies
    }
  }
  printf("threads %d total %ld known %ld entries %ld\n", threads, total, known_total, seq_n);
  for (int t = 0; t < threads; t++) {
    int c = 0;
    for (long i = 0; i < seq_n; i++) c += seq[i] == t;
    printf("thread %d entered %d times\n", t, c);
  }

#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 1)
      for (int k = 0; k < 20; k++) {
#pragma omp critical(held)
        held += k;
      }
    if (t == n - 1) {
      usleep(20000);  // thread 1's node keeps its lease idle meanwhile: asked back outside
#pragma omp critical(held)
      {
        held += 1000;
        usleep(30000);  // thread 0 asks meanwhile: asked back inside, given at the exit
        held += 1000;
      }
    }
    if (t == 0) {
      usleep(35000);
#pragma omp critical(held)
      held += 100000;
    }
  }
  printf("held %ld\n", held);

  // Only thread 1 takes `carry`: its node ends the region holding the lease.
#pragma omp parallel
  {
    if (omp_get_thread_num() == 1)
      for (int k = 0; k < 10; k++) {
#pragma omp critical(carry)
        carry++;
      }
  }
  printf("carry after the first region %ld\n", carry);
#pragma omp parallel
  {
    for (int k = 0; k < 10; k++) {
#pragma omp critical(carry)
      carry += 10;
    }
  }
  printf("carry %ld\n", carry);

#pragma omp parallel
  {
    int t = omp_get_thread_num();
    long mine = 0;
    for (int k = 0; k < 20; k++) {
#pragma omp critical(outer)
      {
        outer++;
#pragma omp critical(inner)
        inner += t + 1;
      }
      omp_set_lock(&lk);
      lock_total += t + 1;
      omp_unset_lock(&lk);
      long got;
#pragma omp atomic capture
      got = ticket++;
      mine += got;
    }
#pragma omp critical
    ticket_sum += mine;
  }
  omp_destroy_lock(&lk);
  printf("outer %ld inner %ld lock %ld tickets %ld sum %ld\n", outer, inner, lock_total, ticket, ticket_sum);
  return 0;
}
