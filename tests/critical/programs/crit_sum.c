/* Per-thread partial sums added to a shared total under `critical` (the most common OpenMP
 * idiom): a local of main and a global, in a `parallel` region and in a `parallel for`. */
#include <omp.h>
#include <stdio.h>

#define N 1000
double a[N];
long g_total;

int main(void) {
  for (int i = 0; i < N; i++) a[i] = i * 0.5;
  double total = 0;
  long itotal = 0;
#pragma omp parallel
  {
    double partial = 0;
    long ip = 0;
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (int i = t; i < N; i += nt) {
      partial += a[i];
      ip += i;
    }
#pragma omp critical
    {
      total += partial;
      itotal += ip;
      g_total += ip;
    }
  }
  printf("total %.1f itotal %ld g_total %ld\n", total, itotal, g_total);

  long count = 0;
#pragma omp parallel for
  for (int i = 0; i < 40; i++) {
#pragma omp critical
    count += i;
  }
  printf("count %ld\n", count);

  /* Again, from the totals the first region left. */
#pragma omp parallel
  {
#pragma omp critical
    total += 1;
  }
  printf("total %.1f\n", total);
  return 0;
}
