/* A file written inside a `single` (one thread, one node: the real file, once), read back in
 * the sequential part on every node, and used by the next region. */
#include <stdio.h>

#define N 600
static int a[N];

int main(void) {
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < N; i++) a[i] = i % 13;
#pragma omp single
    {
      FILE *f = fopen("single.txt", "w");
      if (f) {
        fprintf(f, "%d written once\n", a[N - 1] + 100);
        fclose(f);
      }
    }
  }
  int k = -1;
  FILE *f = fopen("single.txt", "r");
  if (!f || fscanf(f, "%d", &k) != 1) { fprintf(stderr, "single.txt unreadable\n"); return 1; }
  fclose(f);
  long total = 0;
#pragma omp parallel for reduction(+ : total)
  for (int i = 0; i < N; i++) total += a[i] * k;
  printf("single total %ld k %d\n", total, k);
  return 0;
}
