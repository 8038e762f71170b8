/* A histogram with `atomic update`: of a global array (the lock service, one lock per
 * location) and of a local array (the region's reduction over the whole array); scalar
 * atomics that become the region's reductions (+, - and * forms). */
#include <omp.h>
#include <stdio.h>

#define N 240
int data[N];
long hist[8];

int main(void) {
  for (int i = 0; i < N; i++) data[i] = (i * 7 + 3) % 8;
#pragma omp parallel for
  for (int i = 0; i < N; i++) {
#pragma omp atomic update
    hist[data[i]]++;
  }
  for (int b = 0; b < 8; b++) printf("hist[%d] = %ld\n", b, hist[b]);

  int local_hist[8][2] = {{0}};
#pragma omp parallel for
  for (int i = 0; i < N; i++) {
#pragma omp atomic
    local_hist[data[i]][i % 2] += 2;
  }
  for (int b = 0; b < 8; b++) printf("local[%d] = %d %d\n", b, local_hist[b][0], local_hist[b][1]);

  long total = 0;
  double dsum = 100;
  long prod = 1;
#pragma omp parallel for
  for (int i = 0; i < N; i++) {
#pragma omp atomic
    total += data[i];
#pragma omp atomic
    dsum -= 0.5 * data[i];
    if (i % 40 == 0) {
#pragma omp atomic
      prod *= 2;
    }
  }
  printf("total %ld dsum %.1f prod %ld\n", total, dsum, prod);

  /* In a `parallel` region, on a global (read after the region only). */
  static long events;
#pragma omp parallel
  {
    for (int k = 0; k < 5; k++) {
#pragma omp atomic
      events += k;
    }
  }
  printf("events %ld\n", events);
  return 0;
}
