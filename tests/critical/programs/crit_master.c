/* The master's own leases (docs/critical.md, "Session 10"): the master's program keeps a lock
 * nobody else asked for and re-enters bodies with known writes without a trap, as a slave does.
 * A slave's request takes it back in each of its states:
 *   1. idle: the master's monitor has read its bodies' writes since (a trap in between): given
 *      back at once, in-process;
 *   2. logged: bodies entered without a trap since its last runtime call, then a long
 *      computation without any runtime call: the asker still gets every write;
 *   3. inside: the master's body runs (it sleeps in it): given back at its exit.
 * Then the master's lease at a window's end and the lock taken by the last thread in the next
 * region; an atomic and an omp lock that the master keeps while others take them too.
 * The waits order the threads (150 ms, against bodies of microseconds), but a loaded machine
 * may still run the last thread's body before or between the master's: what it saw is printed
 * as "ok" when it is the value of some serial order, and the totals do not depend on the order. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

long m_counter, seen_idle, seen_logged, seen_inside, seen_next, g_acc, spun, ticks[8], lk_count;

static long f(long k) { return k * 3; } /* a call: the body takes the general path (a trap) */

static void spin(double s) {
  double t0 = omp_get_wtime();
  long x = 0;
  while (omp_get_wtime() - t0 < s) x++;
  spun += x > 0;
}

int main(void) {
  int threads = 0;
  omp_lock_t lk;
  omp_init_lock(&lk);

#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 0) {
      threads = n;
      for (int k = 0; k < 50; k++) {
#pragma omp critical(m)
        m_counter += 2;
      }
#pragma omp critical(g)
      g_acc += f(1); /* a trap: the monitor reads the bodies' writes; the lease of m is idle */
      usleep(300000);
    }
    if (t == n - 1 && n > 1) {
      usleep(150000);
#pragma omp critical(m)
      {
        seen_idle = m_counter;
        m_counter += 1000;
      }
    }
  }
  printf("threads %d idle: counter %ld seen %s g %ld\n", threads, m_counter,
         threads == 1 || (seen_idle % 2 == 0 && seen_idle >= 0 && seen_idle <= 100) ? "ok" : "WRONG", g_acc);

#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 0) {
      for (int k = 0; k < 50; k++) {
#pragma omp critical(m)
        m_counter += 2;
      }
      spin(0.3); /* no runtime call: the bodies' writes are logged, unread */
    }
    if (t == n - 1 && n > 1) {
      usleep(150000);
#pragma omp critical(m)
      {
        seen_logged = m_counter;
        m_counter += 1000;
      }
    }
  }
  printf("logged: counter %ld seen %s spun %ld\n", m_counter,
         threads == 1 || (seen_logged % 2 == 0 && seen_logged >= 1100 && seen_logged <= 1200) ? "ok" : "WRONG", spun);

#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 0) {
#pragma omp critical(m)
      {
        m_counter += f(2);
        usleep(300000); /* inside the body when the last thread asks */
        m_counter += 1;
      }
    }
    if (t == n - 1 && n > 1) {
      usleep(150000);
#pragma omp critical(m)
      {
        seen_inside = m_counter;
        m_counter += 1000;
      }
    }
  }
  printf("inside: counter %ld seen %s\n", m_counter,
         threads == 1 || seen_inside == 2207 || seen_inside == 2200 ? "ok" : "WRONG");

  /* The master keeps m at the window's end; the last thread takes it in the next region. */
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0)
      for (int k = 0; k < 10; k++) {
#pragma omp critical(m)
        m_counter += 1;
      }
  }
#pragma omp parallel
  {
    if (omp_get_thread_num() == omp_get_num_threads() - 1) {
#pragma omp critical(m)
      {
        seen_next = m_counter;
        m_counter += 1;
      }
    }
  }
  printf("next: counter %ld seen %ld\n", m_counter, seen_next);

  /* An atomic per location and an omp lock: the master takes them alone first (its leases),
   * then everybody. */
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    if (t == 0)
      for (int k = 0; k < 100; k++) {
#pragma omp atomic
        ticks[k % 8] += 1;
        omp_set_lock(&lk);
        lk_count += 1;
        omp_unset_lock(&lk);
      }
    usleep(100000);
    for (int k = 0; k < 100; k++) {
#pragma omp atomic
      ticks[(k + t) % 8] += t + 1;
      omp_set_lock(&lk);
      lk_count += t + 1;
      omp_unset_lock(&lk);
    }
  }
  long s = 0;
  for (int i = 0; i < 8; i++) s += ticks[i] * (i + 1);
  printf("atomic %ld lock %ld\n", s, lk_count);
  omp_destroy_lock(&lk);
  return 0;
}
