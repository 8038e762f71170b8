/* Critical sections on pages --sync=lazy invalidated (docs/critical.md, "Under --sync=lazy"):
 * each round, every thread writes the `own` words of its share of a heap array (its node
 * keeps those pages; the other nodes drop them); then every thread adds to `locked` words all
 * over the array under one lock, and to eight atomics (contended: grants injected on dropped
 * pages, fetched first), writing `own` words of the same pages between its bodies (they were
 * lost by the partial collects of bodies with known writes: "Session 9"); then the last
 * thread alone adds to `solo` words all over the array under another lock: its node keeps the
 * lease, so its bodies run without a trap and their first touch of a dropped page fetches it
 * (the fault handler, no trap), while the other threads write `own` words on the same pages
 * outside the lock; then three regions in which the last thread alone writes `mine`, the
 * third under the solo lock (pages left writable). Four rounds: the solo lease is renewed
 * into the next windows. Every figure printed is independent of the order the threads got
 * the locks. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define M 4096 /* 24 bytes each: 24 pages */
#define S 4096 /* 8 pages: the first and last of a range written travel eagerly, the others are kept */

struct cell {
  long locked, own, solo;
};

int main(void) {
  struct cell *c = calloc(M, sizeof *c);
  long *tally = calloc(512, sizeof *tally);
  unsigned long *mine = calloc(S, sizeof *mine);
  int threads = 0;
  if (!c || !tally || !mine) return 1;
  for (int r = 0; r < 4; r++) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) c[i].own += i + r;
#pragma omp parallel
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      if (t == 0) threads = n;
      for (int k = 0; k < 200; k++) {
        int i = (k * 97 + t * 1031 + r * 13) % M;
#pragma omp critical(cells)
        c[i].locked += k + t + 1;
#pragma omp atomic
        tally[(k % 8) * 64] += t + 1;
        int j = (k * 61 + t * 7 + r) % M;
        if (j % n == t) c[j].own += 3; /* only this thread writes cell j's own word */
      }
    }
#pragma omp parallel
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      for (int k = 0; k < 300; k++) {
        if (t == n - 1) {
          int i = (k * 131 + r * 17) % M;
#pragma omp critical(solo)
          c[i].solo += k + r + 1;
        } else {
          int j = (k * 37 + t * 11 + r) % M;
          if (j % n == t) c[j].own += 5;
        }
      }
    }
    /* Only the last thread writes `mine` (every word, each of its bytes: dense pages), two
     * regions without a lock: its node keeps those pages, so in the third region they are left
     * writable (lazy's open pages: no write-protect fault), where bodies that run without a
     * trap write them under the solo lock. */
    for (int q = 0; q < 3; q++) {
#pragma omp parallel
      {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        if (t == n - 1)
          for (int k = 0; k < S; k++) {
            int i = (k * 53 + q * 5 + r) % S;
            unsigned long v = 0x0101010101010101ul * (unsigned long)(k + q + 1);
            if (q < 2) {
              mine[i] += v;
            } else {
#pragma omp critical(solo)
              mine[i] += v;
            }
          }
      }
    }
  }
  long locked = 0, own = 0, solo = 0, tallies = 0;
  for (int i = 0; i < M; i++)
    locked += c[i].locked * (i % 7 + 1), own += c[i].own * (i % 5 + 1), solo += c[i].solo * (i % 3 + 1);
  unsigned long mines = 0;
  for (int s = 0; s < 8; s++) tallies += tally[s * 64] * (s + 1);
  for (int i = 0; i < S; i++) mines += mine[i] * (i % 11 + 1);
  printf("threads %d locked %ld own %ld solo %ld tally %ld mine %lu\n", threads, locked, own, solo, tallies, mines);
  free(c);
  free(tally);
  free(mine);
  return 0;
}
