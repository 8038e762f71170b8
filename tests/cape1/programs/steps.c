/* Beyond the corpus for --model=cape1 (docs/cape1.md "Regions"): a region whose barriers are
 * in a loop (many steps, each an exchange of complete checkpoints' deltas), a reduction
 * across all those steps, a worksharing `for` in the loop, a shared array local to main
 * written by every part, private data that must survive every barrier, heap memory, and a
 * region met inside a part (serial there, a team of one). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 240

static int inner_sum(int k) {
  int s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < k; i++) s += i + omp_get_num_threads();
  return s;
}

int main(void) {
  double *grid = malloc(N * sizeof *grid), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) grid[i] = i;
  long seen[8] = {0}, total = 5;
  int inner[8] = {0};
#pragma omp parallel reduction(+: total)
  {
    int t = omp_get_thread_num();
    long mine = 1000 * (t + 1);
    for (int step = 0; step < 6; step++) {
#pragma omp for
      for (int i = 0; i < N; i++) out[i] = grid[i] * 0.5 + step;
#pragma omp for nowait
      for (int i = 0; i < N; i++) grid[i] = out[(i + 1) % N] + (i % 7);
      mine += step;
      total += t + step;
#pragma omp barrier
      seen[t] = mine;
    }
    inner[t] = inner_sum(10 + t);
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += grid[i];
  int n = omp_get_max_threads();
  printf("sum %.3f total %ld\n", s, total);
  for (int t = 0; t < n && t < 8; t++) printf("part %d: seen %ld inner %d\n", t, seen[t], inner[t]);
  free(grid);
  free(out);
  return 0;
}
