/* A file-scope threadprivate written by the sequential part: OpenMP gives the
 * other threads their own copies (the initial value first, then their own from
 * the previous region); every cape node runs the sequential part, so a slave's
 * thread 0 must not see those writes (under --model=mt too). copyin then
 * gives everyone the master's. */
#include <omp.h>
#include <stdio.h>
int tp = 5;
double tpd = 0.5;
#pragma omp threadprivate(tp, tpd)
int res[64][3];
int main(void) {
  int nt = 0;
  tp = 50; tpd = 2.0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    res[t][0] = tp;
    tp += t;
    tpd *= t + 1;
#pragma omp single
    nt = omp_get_num_threads();
  }
  tp += 1000;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    res[t][1] = tp + (int)tpd;
  }
  tp = 7;
#pragma omp parallel copyin(tp)
  {
    int t = omp_get_thread_num();
    res[t][2] = tp * 10 + t;
  }
  for (int t = 0; t < nt; t++) printf("thread %d: %d %d %d\n", t, res[t][0], res[t][1], res[t][2]);
  printf("master tp %d tpd %.6g\n", tp, tpd);
  return 0;
}
