/* Results collected under critical into a shared array with a shared counter (sorted before
 * printing: the order of the sections is any serial order), a critical body that writes
 * whole pages (memcpy of 20 KiB), critical beside a reduction clause, and regions repeated
 * in an iterative loop. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 60
int found[N];
int nfound;
char big[20480], src[4][20480];

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(void) {
  long sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < N; i++) {
    sum += i;
    if (i % 7 == 3) {
#pragma omp critical
      found[nfound++] = i;
    }
  }
  qsort(found, nfound, sizeof found[0], cmp);
  printf("sum %ld found %d:", sum, nfound);
  for (int k = 0; k < nfound; k++) printf(" %d", found[k]);
  printf("\n");

  for (int t = 0; t < 4; t++) memset(src[t], 'a' + t, sizeof src[t]);
  int last = -1;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp critical(copy)
    {
      memcpy(big, src[t % 4], sizeof big);
      last = t;
    }
  }
  /* Whoever was last, the buffer is whole and is its source. */
  printf("buffer whole %d\n", memcmp(big, src[last % 4], sizeof big) == 0);

  double err = 1.0;
  int iters = 0;
  while (err > 0.01) {
    double worst = 0;
#pragma omp parallel
    {
      double mine = err / (2 + omp_get_thread_num());
#pragma omp critical
      if (mine > worst) worst = mine;
    }
    err = worst;
    iters++;
  }
  printf("iterations %d err %.6f\n", iters, err);
  return 0;
}
