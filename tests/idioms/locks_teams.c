/* omp_lock_t around a shared counter and a linked list built by several
 * threads, omp_set_num_threads() before a region, num_threads(2), a region
 * reached from inside a parallel for (serialized: omp_get_level), omp_get_wtime
 * used for a duration that is only checked, and a malloc'd buffer filled in
 * slices through a firstprivate pointer. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
struct node { int v; struct node *next; };
static long inner_sum(int k) {
  long s = 0;
#pragma omp parallel for reduction(+: s)
  for (int j = 0; j < 10; j++) s += j * k + omp_get_level() * 1000;
  return s;
}
int main(void) {
  omp_lock_t lk;
  omp_init_lock(&lk);
  long counter = 0;
  int nlist = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < 300; i++) {
      if (i % 7 == 0) {
        omp_set_lock(&lk);
        counter += i;
        nlist++;
        omp_unset_lock(&lk);
      }
    }
  }
  omp_destroy_lock(&lk);
  long inner[40];
#pragma omp parallel for
  for (int k = 0; k < 40; k++) inner[k] = inner_sum(k);
  int team2 = 0, teamset = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    team2 = omp_get_num_threads();
  }
  omp_set_num_threads(2);
#pragma omp parallel
  {
#pragma omp master
    teamset = omp_get_num_threads();
  }
  int *buf = malloc(1000 * sizeof *buf);
  int *p = buf;
#pragma omp parallel for firstprivate(p)
  for (int i = 0; i < 1000; i++) p[i] = i * 2 + 1;
  long bs = 0; for (int i = 0; i < 1000; i++) bs += buf[i];
  long is = 0; for (int k = 0; k < 40; k++) is += inner[k];
  double dt = omp_get_wtime() - t0;
  printf("counter %ld nlist %d inner %ld team2 %d teamset %d bs %ld time_ok %d\n", counter, nlist, is, team2, teamset, bs,
         dt >= 0 && dt < 100);
  free(buf);
  return 0;
}
