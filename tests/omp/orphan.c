/* Orphaned worksharing constructs with data-sharing clauses: a `for` with a reduction and a
 * `for` with lastprivate in a function called from a region (and called again outside any
 * region, where they run serially). */
#include <omp.h>
#include <stdio.h>

#define N 3000
static double total = 1.0;
static long out[N];
static int last_i = -1;

static void work(int n, int mult) {
#pragma omp for reduction(+: total)
  for (int i = 0; i < n; i++) total += i * 0.5 * mult;
#pragma omp for lastprivate(last_i)
  for (int i = 0; i < n; i++) {
    out[i] += (long)i * mult;
    last_i = i;
  }
}

int main(void) {
#pragma omp parallel
  work(N, 2);
  work(N / 2, 1);  /* serially */
  long s = 0;
  for (int i = 0; i < N; i++) s += out[i];
  printf("total %.3f last_i %d sum %ld\n", total, last_i, s);
  return 0;
}
