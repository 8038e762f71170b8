/* omp_get_max_threads() before the first region sizes per-thread data (the two-level model: nodes x threads per node, known before main). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n = omp_get_max_threads();
  int *per = calloc(n, sizeof *per);
#pragma omp parallel for
  for (int i = 0; i < 100; i++) per[omp_get_thread_num()] += i;
  long s = 0;
  for (int t = 0; t < n; t++) s += per[t] * (t + 1);
  printf("max %d weighted %ld\n", n, s);
  return 0;
}
