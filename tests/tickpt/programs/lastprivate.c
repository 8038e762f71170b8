/* lastprivate: `#pragma omp parallel for lastprivate(last, k)`: after the loop `last` and
 * `k` hold the values of the sequentially last iteration, whichever node ran it. With
 * argument 2 = "slave" the last chunk is on the last slave (the default order: node k runs
 * chunk k); with "master" the master runs the last chunk and every node states its chunk's
 * order with cape_set_order. Prints "last=... k=... sum=..." (NATIVE: the OpenMP build).
 * Arguments: tickpt|dickpt slave|master. */
#include <stdio.h>
#ifndef NATIVE
#include "template.h"
#endif

#define N 999
static long last = -1;
static int k = -1;
static long b[N];

#define BODY(i)                   \
  do {                            \
    last = (long)(i) * (i) + 7;   \
    k = (i);                      \
    b[i] = last;                  \
  } while (0)

#ifndef NATIVE
static void clauses(void) {
  cape_set_lastprivate(&last, sizeof last);
  cape_set_lastprivate(&k, sizeof k);
  cape_set_shared(b, sizeof b);
}
static void body(int lo, int hi) {
  for (int i = lo; i < hi; ++i) BODY(i);
}
#endif

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
#ifndef NATIVE
  tpl_model(argc, argv);
  int master_last = argc > 2 && argv[2][0] == 'm';
  tpl_for(N, clauses, body, master_last);
#else
#pragma omp parallel for lastprivate(last, k)
  for (int i = 0; i < N; ++i) BODY(i);
#endif
  long sum = 0;
  for (int i = 0; i < N; ++i) sum += b[i];
  printf("last=%ld k=%d sum=%ld\n", last, k, sum);
  return 0;
}
