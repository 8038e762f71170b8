/* Benchmark (scripts/critical-first-entry.sh; bench-critical.sh's `never` line alone): slave 1's
 * first entry of a lock in the job, once per region (an atomic on a location no node used
 * before: a request, a grant and its lease), timed by the program.
 *   first_entry [REGIONS]  ->  stderr "first-entry median U us" and, with FIRST_ENTRY_STAMPS=1 in
 *   the environment, "at R T0 T1" per region: omp_get_wtime() before and after the entry, the
 *   monitors' clock (--log debug lines' "[t ...]"), for the script's time line. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMax = 1000 };
double t_at[kMax], t_end[kMax];
long cells[kMax];

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  if (n < 1 || n > kMax) n = 40;
  for (int r = 0; r < n; r++) {
#pragma omp parallel
    {
      if (omp_get_thread_num() == 1) {
        double t0 = omp_get_wtime();
#pragma omp atomic
        cells[r] += 1;
        t_end[r] = omp_get_wtime();
        t_at[r] = t0;
      }
    }
  }
  long total = 0;
  double d[kMax];
  for (int r = 0; r < n; r++) {
    total += cells[r];
    d[r] = t_end[r] - t_at[r];
  }
  for (int i = 1; i < n; i++)  // (sorts d)
    for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
      double x = d[j];
      d[j] = d[j - 1];
      d[j - 1] = x;
    }
  printf("total %ld\n", total);
  fprintf(stderr, "first-entry median %.1f us\n", (n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2) * 1e6);
  if (getenv("FIRST_ENTRY_STAMPS"))
    for (int r = 0; r < n; r++) fprintf(stderr, "at %d %.6f %.6f\n", r, t_at[r], t_end[r]);
  return 0;
}
