/* Benchmark (scripts/bench-critical.sh): the cost of entering a critical section, per entry.
 *   critical N   ->  stderr "bench: uncontended-master U0 uncontended-slave U1 contended C
 *                    first-slave F taken-slave T" (us)
 * Uncontended: one thread enters N times while the others wait at the region's end (the
 * master's local path, then slave 1's: with lock leases, its first entry asks the master and
 * the others re-enter the lease); contended: every thread enters N times at once (the mean
 * time between one thread's entries). First: slave 1's first entry of a region, the lock
 * free (one per region, 20 regions: a lease's acquisition). Taken: the same while slave 2
 * keeps the lease (it entered once, 2 ms before): the lease is asked back from it. Each
 * thread times its own entries with omp_get_wtime and writes its figure to a shared
 * variable only it writes. Never: slave 1's first entry of a lock in the job (an atomic on
 * a location no node used before: a request, a grant and its lease; 20 regions, one each).
 * First, taken and never are the medians of their 20 entries (session 11: the means moved
 * 2-10x between runs of one binary under load, one entry of 20 taking a 20 ms stall). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

double t_master, t_slave, t_contended[64];
enum { kRegions = 20 };
double t_first[kRegions], t_taken[kRegions], t_never[kRegions];

static double median(double *v, int n) {  // (sorts v)
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
long total, cells[64];

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
  for (int r = 0; r < 2 * kRegions; r++) {
#pragma omp parallel
    {
      int t = omp_get_thread_num();
      if (r % 2 && t == 2) {
#pragma omp critical
        total++;
      }
      if (t == 1) {
        if (r % 2) usleep(2000);  // slave 2 holds the lease by then
        double t0 = omp_get_wtime();
#pragma omp critical
        total++;
        if (r % 2) t_taken[r / 2] = omp_get_wtime() - t0;
        else t_first[r / 2] = omp_get_wtime() - t0;
      }
    }
  }
  for (int r = 0; r < kRegions; r++) {
#pragma omp parallel
    {
      if (omp_get_thread_num() == 1) {
        double t0 = omp_get_wtime();
#pragma omp atomic
        cells[r] += 1;
        t_never[r] = omp_get_wtime() - t0;
      }
    }
  }
  for (int r = 0; r < kRegions; r++) total += cells[r];
  int threads = omp_get_max_threads();
  double worst = 0;
  for (int t = 0; t < threads && t < 64; t++)
    if (t_contended[t] > worst) worst = t_contended[t];
  printf("total %ld\n", total);
  fprintf(stderr,
          "bench: uncontended-master %.2f uncontended-slave %.2f contended %.2f first-slave %.2f taken-slave %.2f "
          "never-slave %.2f\n",
          t_master * 1e6, t_slave * 1e6, worst * 1e6, median(t_first, kRegions) * 1e6,
          median(t_taken, kRegions) * 1e6, median(t_never, kRegions) * 1e6);
  return 0;
}
