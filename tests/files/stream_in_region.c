/* A stream opened for writing in the sequential part is still open when regions start: each
 * slave must say (once) that what it writes there inside regions goes to its private copy.
 * The loop bodies write nothing to it, so the file equals gcc -fopenmp's. */
#include <stdio.h>

#define N 1000
static int a[N];

int main(void) {
  FILE *log = fopen("loop_log.txt", "w");
  if (!log) return 1;
  fprintf(log, "start\n");
  fflush(log);
  for (int r = 0; r < 2; r++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] += i;
  }
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i];
  fprintf(log, "sum %ld\n", s);
  fclose(log);
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] += 1;
  printf("stream_in_region %ld\n", s);
  return 0;
}
