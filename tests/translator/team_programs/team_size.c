/* The team of a plain `parallel` region follows omp_set_num_threads (-DSET=T) or
 * OMP_NUM_THREADS (e2e.sh --omp-threads=T) when they ask for fewer threads than the nodes
 * (session 14: it had one thread per node, `cnt 3` where gcc prints `cnt 2`). Every thread
 * prints a line (the same text: the count is what differs), a reduction, `for`, `single`,
 * `barrier`, `master`, omp_get_num_threads / omp_get_thread_num, code before and after each
 * directive (which the nodes outside the team jump over), `critical` and `atomic` (the team's
 * code too), a one-statement body, and a num_threads clause, which wins over both. */
#include <omp.h>
#include <stdio.h>
#define N 100
static int who[N], team_of[8], hits[8];
static long total, crit, at;
static void work(int me) { hits[me] += 10; }
int main(void) {
  int i;
#ifdef SET
  omp_set_num_threads(SET);
#endif
  printf("max %d\n", omp_get_max_threads());
  int cnt = 0;
#pragma omp parallel reduction(+: cnt)
  cnt += 1;
  printf("cnt %d\n", cnt);

  long s = 0;
  int ids = 0;
#pragma omp parallel reduction(+: s, ids)
  {
    int me = omp_get_thread_num();
    int size = omp_get_num_threads();
    printf("in the region: a team of %d, in parallel %d\n", size, omp_in_parallel());
    team_of[me] = size;
    hits[me] += 1;
    ids += 1 << me;
    s += 100 + me;
#pragma omp critical
    crit += 1;
#pragma omp atomic
    at += me + 1;
#pragma omp for
    for (i = 0; i < N; i++) who[i] = me;
    work(me);
#pragma omp single
    total = size * 1000;
#pragma omp barrier
    s += who[N - 1] + total;
#pragma omp barrier
#pragma omp master
    total += 7;
    hits[me] += 100;
  }
  for (i = 0; i < N; i += 10) printf("%d ", who[i]);
  printf("\ncritical %ld atomic %ld", crit, at);
  printf("\ns=%ld ids=%d total=%ld team=%d,%d,%d,%d hits=%d,%d,%d,%d\n", s, ids, total, team_of[0], team_of[1],
         team_of[2], team_of[3], hits[0], hits[1], hits[2], hits[3]);

  /* num_threads wins (2 <= the nodes of every run of this test). */
  int nt = 0;
#pragma omp parallel num_threads(2) reduction(+: nt)
  nt += 10 + omp_get_num_threads();
  printf("num_threads(2): %d\n", nt);
#pragma omp parallel num_threads(2)
  {
#pragma omp critical
    crit += 100;
  }
  printf("critical %ld\n", crit);
  return 0;
}
