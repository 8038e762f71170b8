/* A parallel region with for, sections, single, master, barrier and nowait. */
#include <omp.h>
#include <stdio.h>

#define N 300
static int a[N], b[N], owner[64];
static int nthreads, single_count, master_seen;

int main(void) {
  int x = 7;
#pragma omp parallel private(x)
  {
    x = omp_get_thread_num();
    owner[x] = x + 1;
#pragma omp for
    for (int i = 0; i < N; i++) a[i] = i * 2;
#pragma omp for schedule(static, 10) nowait
    for (int i = 0; i < N; i++) b[i] = a[N - 1 - i] + 1;
#pragma omp barrier
#pragma omp single
    {
      nthreads = omp_get_num_threads();
      single_count++;
    }
#pragma omp master
    master_seen = 1;
#pragma omp sections
    {
#pragma omp section
      a[0] = -5;
#pragma omp section
      a[1] = -6;
    }
    owner[x] += x;  /* x is still this thread's after the barriers */
  }
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i] + 3L * b[i];
  int owners = 0;
  for (int t = 0; t < 64; t++) owners += owner[t];
  printf("threads %d single %d master %d x %d sum %ld owners %d\n", nthreads, single_count,
         master_seen, x, s, owners);
  return 0;
}
