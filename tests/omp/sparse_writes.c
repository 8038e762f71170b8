/* Regions that write little or nothing (issue 14: a region where a node wrote nothing skips
 * work; docs/monitor.md, "Eighth pass"): regions nobody writes, regions where one iteration
 * (so one node) writes one word, the master's thread alone, a word written and put back (its
 * page written, nothing changed), a word of the sequential part now and then, a critical
 * section entered on some regions only (-DSPARSE_CRITICAL). Every word must reach every
 * node: each round ends with a region that reads all of them. */
#include <omp.h>
#include <stdio.h>

#define N 6000
#define ROUNDS 30
static long g[N];
static long h[64];
static int in_critical;

int main(void) {
  unsigned long check = 0;
  for (int r = 0; r < ROUNDS; r++) {
    int who = r % 8;
    /* Nobody writes (r % 3 == 0), or iteration `who` alone writes one word. */
#pragma omp parallel for
    for (int i = 0; i < 8; i++) {
      if (r % 3 == 0) continue;
      if (i == who) g[(r * 37) % N] += r + i + 1;
    }
    /* The sequential part writes a word on some rounds. */
    if (r % 4 == 1) g[(r * 91 + 5) % N] ^= r + 3;
    /* Only the thread that runs iteration 0 writes, on odd rounds. */
#pragma omp parallel for
    for (int i = 0; i < 16; i++)
      if (i == 0 && r % 2) h[r % 64] += 7;
    /* A word written and put back: its page is written, no word changed. */
#pragma omp parallel for
    for (int i = 0; i < 4; i++)
      if (i == 3) {
        g[(r * 13 + 1) % N] += 11;
        g[(r * 13 + 1) % N] -= 11;
      }
#ifdef SPARSE_CRITICAL /* (tests/eager, tests/lazy; --model=cape1 has no critical) */
    /* One thread of a `parallel` region enters a critical section, on rounds r % 5 == 2. */
#pragma omp parallel
    {
      if (omp_get_thread_num() == 0 && r % 5 == 2) {
#pragma omp critical
        in_critical += r;
      }
    }
#else
    if (r % 5 == 2) in_critical += r;
#endif
    /* Every node reads every word. */
    long part = 0;
#pragma omp parallel for reduction(+ : part)
    for (int i = 0; i < N; i++) part += g[i] * (i % 7 + 1);
    check = check * 31 + (unsigned long)part;
  }
  long hs = 0;
  for (int i = 0; i < 64; i++) hs += h[i] * (i + 1);
  printf("sparse_writes check %lu h %ld critical %d\n", check, hs, in_critical);
  return 0;
}
