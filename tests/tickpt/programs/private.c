/* private, firstprivate and shared arrays: `#pragma omp parallel for private(tmp)
 * firstprivate(scale) shared(a)`. Every node writes the private scratch `tmp` with its own
 * values; it must not travel, and after the region it keeps the value it had before
 * (OpenMP: the original item is not touched by the private copies). `scale` is read
 * (firstprivate) and scribbled on inside the body; it comes out unchanged too. Prints
 * "a_sum=... tmp=... scale=..." (NATIVE: the OpenMP build). Argument: tickpt|dickpt. */
#include <stdio.h>
#ifndef NATIVE
#include "template.h"
#endif

#define N 3000
static long a[N];
static long tmp = 42;
static long scale = 3;

#define BODY(i)                             \
  do {                                      \
    long s_ = scale;                        \
    scale = -1;                             \
    tmp = (long)(i) * s_ + 1;               \
    a[i] += tmp * 2;                        \
    scale = s_;                             \
  } while (0)

#ifndef NATIVE
static void clauses(void) {
  cape_set_private(&tmp, sizeof tmp);
  cape_set_firstprivate(&scale, sizeof scale);
  cape_set_shared(a, sizeof a);
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
#endif
  for (int r = 0; r < 2; ++r) {
#ifdef NATIVE
#pragma omp parallel for private(tmp) firstprivate(scale) shared(a)
    for (int i = 0; i < N; ++i) BODY(i);
#else
    tpl_for(N, clauses, body, 0);
#endif
  }
  long sum = 0;
  for (int i = 0; i < N; ++i) sum += a[i] * (i % 7 + 1);
  printf("a_sum=%ld tmp=%ld scale=%ld\n", sum, tmp, scale);
  return 0;
}
