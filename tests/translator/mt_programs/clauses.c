/* The clauses of `parallel for` and `parallel sections` under the two-level model (issue 13):
 * firstprivate, lastprivate (also of the loop variable, also with firstprivate), private,
 * reductions of every kind of operator, over scalars, an array and an array section,
 * schedule(static, c), collapse(2), num_threads, and heap blocks allocated in loop bodies by
 * every thread. Compared with gcc -fopenmp. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 997
int a[N];
double grid[40][30];

int main(void) {
  int base = 5, step = 3, last = -1, i, tmp = 0, hist[8] = {0};
  long sum = 0, prod = 1;
  int mn = 1 << 30, mx = -1, bits = 0, all = 1, any = 0;
  double dsum = 0;
#pragma omp parallel for firstprivate(base, step) lastprivate(last) private(tmp) reduction(+: sum)
  for (int k = 0; k < N; k++) {
    tmp = base + k * step;
    a[k] = tmp;
    sum += tmp;
    last = tmp * 2 + omp_get_thread_num() * 0;
  }
  printf("sum %ld last %d a[500] %d base %d\n", sum, last, a[500], base);

#pragma omp parallel for schedule(static, 5) lastprivate(i) reduction(min: mn) reduction(max: mx) reduction(|: bits) \
    reduction(&&: all) reduction(||: any)
  for (i = 0; i < N; i++) {
    if (a[i] % 7 < mn) mn = a[i] % 7;
    if (a[i] % 1000 > mx) mx = a[i] % 1000;
    bits |= 1 << (i % 13);
    all = all && a[i] > 0;
    any = any || a[i] == 1496;
  }
  printf("i %d mn %d mx %d bits %x all %d any %d\n", i, mn, mx, bits, all, any);

#pragma omp parallel for reduction(+: hist[2:4]) reduction(*: prod)
  for (int k = 0; k < 64; k++) {
    hist[2 + k % 4] += k;
    if (k % 16 == 1) prod *= 3;
  }
  printf("hist %d %d %d %d %d %d prod %ld\n", hist[1], hist[2], hist[3], hist[4], hist[5], hist[6], prod);

#pragma omp parallel for collapse(2) reduction(+: dsum) num_threads(3)
  for (int r = 0; r < 40; r++)
    for (int c = 0; c < 30; c++) {
      grid[r][c] = r * 0.5 + c * 0.25;
      dsum += grid[r][c];
    }
  printf("dsum %.2f grid %.2f\n", dsum, grid[39][29]);

  int *blocks[N];
#pragma omp parallel for
  for (int k = 0; k < N; k++) {
    blocks[k] = malloc((k % 50 + 1) * sizeof(int));
    for (int j = 0; j <= k % 50; j++) blocks[k][j] = k + j;
  }
  long bsum = 0;
  for (int k = 0; k < N; k++) {
    bsum += blocks[k][k % 50];
    free(blocks[k]);
  }
  printf("blocks %ld\n", bsum);

  int seed = 11, psec = 0, s1 = 0, s2 = 0, s3 = 0;
  long gsum = 0;
#pragma omp parallel sections firstprivate(seed) lastprivate(psec) reduction(+: gsum)
  {
#pragma omp section
    { s1 = seed * 2; psec = 1; gsum += 10; }
#pragma omp section
    { s2 = seed * 3; psec = 2; gsum += 20; }
#pragma omp section
    { s3 = seed * 4; psec = 3; gsum += 30; }
  }
  printf("sections %d %d %d psec %d gsum %ld\n", s1, s2, s3, psec, gsum);
  return 0;
}
