/* threadprivate (002_2c61c2cb27f62a9a.txt Fig. 6) and copyin: each thread (node) keeps its
 * own copy from region to region; copyin gives every thread the master's value. Needs the
 * same number of threads in every region and dynamic threads off (OpenMP's condition for
 * persistence), as here. */
#include <omp.h>
#include <stdio.h>

static int counter = 1;
static double scale = 1.0;
#pragma omp threadprivate(counter, scale)
int r1[8], r2[8], r3[8];
double r4[8];

int main(void) {
  omp_set_dynamic(0);
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    counter += t + 1;
    scale *= t + 2;
    r1[t] = counter;
  }
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    counter *= 10;  /* this thread's value from the first region */
    r2[t] = counter;
  }
  /* No assignment here: in CAPE every node runs the sequential code, so only values the
   * threads left differently show whether copyin works: the master's counter (20) and
   * scale (2) go to every thread. */
#pragma omp parallel copyin(counter, scale)
  {
    int t = omp_get_thread_num();
    counter += t;
    r3[t] = counter;
    r4[t] = scale * (t + 1);
  }
  /* Neighbouring ints written by different nodes (schedule(static, 1)): the monitor's
   * three-way merge keeps each node's bytes. */
  int r5[64] = {0};
#pragma omp parallel for copyin(counter) schedule(static, 1)
  for (int k = 0; k < 6; k++) r5[k] = counter + k;  /* every thread from the master's 20 */
  printf("parallel for copyin: %d %d %d %d %d %d\n", r5[0], r5[1], r5[2], r5[3], r5[4], r5[5]);
  int n = omp_get_max_threads();
  for (int t = 0; t < n && t < 8; t++) printf("thread %d: %d %d %d %.2f\n", t, r1[t], r2[t], r3[t], r4[t]);
  printf("master counter %d scale %.2f\n", counter, scale);
  return 0;
}
