/* Benchmark (scripts/bench-critical.sh): the cost of entering a critical section, per entry.
 *   critical N   ->  stderr "bench: uncontended-master U0 uncontended-slave U1 contended C" (us)
 * Uncontended: one thread enters N times while the others wait at the region's end (the
 * master's local path, then slave 1's round trips to the master); contended: every thread
 * enters N times at once (the mean time between one thread's entries). Each thread times its
 * own loop with omp_get_wtime and writes its figure to a shared variable only it writes. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

double t_master, t_slave, t_contended[64];
long total;

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int who = 0; who < 2; who++) {
#pragma omp parallel
    {
      if (omp_get_thread_num() == who) {
        double t0 = omp_get_wtime();
        for (int k = 0; k < n; k++) {
#pragma omp critical
          total++;
        }
        double t = (omp_get_wtime() - t0) / n;
        if (who == 0) t_master = t;
        else t_slave = t;
      }
    }
  }
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    double t0 = omp_get_wtime();
    for (int k = 0; k < n; k++) {
#pragma omp critical
      total++;
    }
    if (t < 64) t_contended[t] = (omp_get_wtime() - t0) / n;
  }
  int threads = omp_get_max_threads();
  double worst = 0;
  for (int t = 0; t < threads && t < 64; t++)
    if (t_contended[t] > worst) worst = t_contended[t];
  printf("total %ld\n", total);
  fprintf(stderr, "bench: uncontended-master %.2f uncontended-slave %.2f contended %.2f\n", t_master * 1e6,
          t_slave * 1e6, worst * 1e6);
  return 0;
}
