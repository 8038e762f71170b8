/* Named critical sections guarding two totals, and a heap array under one of them. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

long sum_even, sum_odd;

int main(void) {
  long *hist = calloc(4, sizeof *hist);
  long both = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    for (int k = 0; k < 3; k++) {
#pragma omp critical(even)
      sum_even += 2 * (t + k);
#pragma omp critical(odd)
      {
        sum_odd += 2 * (t + k) + 1;
        hist[k] += t + 1;
        both += 1;
      }
    }
  }
  printf("even %ld odd %ld both %ld\n", sum_even, sum_odd, both);
  for (int k = 0; k < 4; k++) printf("hist[%d] = %ld\n", k, hist[k]);
  free(hist);
  return 0;
}
