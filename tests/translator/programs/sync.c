/* Issue 12's synchronisation that means something under CAPE: flush (a no-op between
 * barriers), critical and atomic where one thread runs alone (master, single, a section),
 * OpenMP 5's loop construct (bound to the region: a for) and parallel loop. */
#include <stdio.h>
#define N 600
static int a[N], b[N];
static long total, count, hits;
int main(void) {
  int i;
  long s = 0;
  double d = 0;
#pragma omp parallel
  {
#pragma omp for
    for (i = 0; i < N; i++) a[i] = i % 7;
#pragma omp flush
#pragma omp single
    {
#pragma omp critical
      total += 100;
#pragma omp atomic
      count++;
#pragma omp atomic update
      count += 2;
    }
#pragma omp master
    {
#pragma omp critical (named)
      {
        hits += 5;
      }
#pragma omp atomic write
      d = 2.5;
    }
#pragma omp barrier
#pragma omp sections
    {
#pragma omp section
      {
#pragma omp critical
        b[0] = 11;
      }
#pragma omp section
      {
#pragma omp atomic
        b[1] += 7;
      }
#pragma omp section
      {
#pragma omp flush(b)
        b[2] = 3;
      }
    }
#pragma omp loop
    for (i = 3; i < N; i++) b[i] = a[i] * 2;
  }
#pragma omp parallel loop reduction(+: s)
  for (i = 0; i < N; i++) s += a[i] + b[i];
#pragma omp flush(s)
  printf("%ld %ld %ld %ld %.1f %d %d %d\n", s, total, count, hits, d, b[0], b[1], b[2]);
  return 0;
}
