/* Who runs which iteration: omp_get_thread_num() and omp_get_num_threads() in parallel
 * fors under schedule(static) and schedule(static, 7), with a reduction and a lastprivate.
 * Under cape-cc --model=mt (issue 13) the team is nodes x threads per node, and each
 * iteration must be run by the thread native OpenMP gives it. */
#include <omp.h>
#include <stdio.h>
#define N 1000
double a[N], b[N];
int owner[N];
int main(void) {
  double s = 0; int last = -1; int nt = 0;
  for (int i = 0; i < N; i++) b[i] = i * 0.5;
#pragma omp parallel for reduction(+:s) lastprivate(last)
  for (int i = 0; i < N; i++) { a[i] = b[i] * 2; s += a[i]; owner[i] = omp_get_thread_num(); last = i * 3; if (i == 0) nt = omp_get_num_threads(); }
#pragma omp parallel for schedule(static, 7)
  for (int i = 0; i < N; i++) owner[i] += 100 * omp_get_thread_num();
  long h = 0; for (int i = 0; i < N; i++) h = h * 31 + owner[i];
  printf("s %.1f last %d nt %d a[999] %.1f hash %ld\n", s, last, nt, a[999], h);
  return 0;
}
