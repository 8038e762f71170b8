/* num_threads(n) on a parallel region (issue 12): the team is n nodes when n is smaller
 * than the node count, else every node; omp_get_num_threads() says which. The nodes
 * outside the team meet the region's barriers without running its code. */
#include <stdio.h>
#include <omp.h>
#define N 90
static int who[N], team[8], seen[8];
static long total;
int main(void) {
  int i;
  long s = 0;
#pragma omp parallel num_threads(2) reduction(+: s)
  {
    int me = omp_get_thread_num();
    int size = omp_get_num_threads();
    team[me] = size;
    s += 100 + me;
#pragma omp for
    for (i = 0; i < N; i++) who[i] = me;
    seen[me] += 1;
#pragma omp single
    total = size * 1000;
#pragma omp barrier
    s += who[N - 1];
  }
#pragma omp parallel num_threads(64)
  {
#pragma omp master
    team[7] = omp_get_num_threads() >= 3; /* 64 natively, every node (3) under CAPE: fewer threads are allowed */
  }
#pragma omp parallel num_threads(1)
  {
    team[6] = omp_get_num_threads() + 10 * omp_get_thread_num();
  }
  for (i = 0; i < N; i += 10) printf("%d ", who[i]);
  printf("\ns=%ld total=%ld team=%d,%d,%d seen=%d,%d,%d\n", s, total, team[0], team[1], team[2], seen[0], seen[1], seen[2]);
  printf("%d %d\n", team[7], team[6]);
  return 0;
}
