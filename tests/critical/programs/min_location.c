/* A min-location search under critical: each thread's best candidate, then the shared best
 * (value, then the lowest index on ties), updated under critical; and the form that checks
 * the shared best before entering. */
#include <omp.h>
#include <stdio.h>

#define N 500
double v[N];

int main(void) {
  for (int i = 0; i < N; i++) v[i] = (double)((i * 7919) % 1009) - 300.0;
  double best = 1e300;
  int where = -1;
#pragma omp parallel
  {
    double mine = 1e300;
    int at = -1;
#pragma omp for
    for (int i = 0; i < N; i++)
      if (v[i] < mine) mine = v[i], at = i;
#pragma omp critical
    if (mine < best || (mine == best && at < where)) {
      best = mine;
      where = at;
    }
  }
  printf("min %.1f at %d\n", best, where);

  double low = 1e300;
  int low_at = -1;
#pragma omp parallel for
  for (int i = 0; i < N; i++) {
    if (v[i] <= low) {
#pragma omp critical(low)
      if (v[i] < low || (v[i] == low && i < low_at)) {
        low = v[i];
        low_at = i;
      }
    }
  }
  printf("min %.1f at %d\n", low, low_at);
  return 0;
}
