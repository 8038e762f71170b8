//@ extra: two_files_b.c
/* A program in two files (cape-cc two_files_a.c two_files_b.c): globals and
 * same-named statics in both, regions in both, an orphaned for in the other file. */
#include <omp.h>
#include <stdio.h>
extern double shared_b[1500];
extern int b_calls;
void fill_b(int scale);
void orphan_for(int *dst, int n);
long sum_b(void);
int vals[1500];
static int local_k = 3;
static long reg(void) {
  long s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < 1500; i++) s += vals[i] * local_k;
  return s;
}
int main(void) {
  fill_b(4);
#pragma omp parallel
  orphan_for(vals, 1500);
  long r = reg();
  local_k = 5;
  long r2 = reg();
  printf("r %ld r2 %ld sum_b %ld calls %d b[7] %.6g\n", r, r2, sum_b(), b_calls, shared_b[7]);
  return 0;
}
