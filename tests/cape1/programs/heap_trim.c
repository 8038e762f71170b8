/* The heap grows in one part, gives its top back and grows again inside one region (CAPE-1:
 * every part allocates from the cape heap's arena 0): an 18 MiB block malloc'd in a `single`,
 * read by a `for`, freed (the arena's top is mapped afresh: its pages dropped), then a calloc
 * that must read as zeros in every part (docs/cape1.md, "Memory allocated inside a region"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
  double *a = 0, *b = 0;
  long n = 9 << 18, m = 1 << 20; /* a block above the heap's 16 MiB trim threshold */
  double s1 = 0, s2 = 0;
#pragma omp parallel
  {
#pragma omp single
    {
      a = malloc(n * sizeof *a);
      for (long i = 0; i < n; i += 8192) a[i] = i;
    }
#pragma omp for reduction(+ : s1)
    for (long i = 0; i < n; i += 8192) s1 += a[i] * 2;
#pragma omp single
    {
      free(a);
      b = calloc(m, sizeof *b);
      b[m - 1] = 7;
    }
#pragma omp for reduction(+ : s2)
    for (long i = 0; i < m; i++) s2 += b[i];
#pragma omp single
    printf("single after %g %g\n", s1, s2);
  }
  printf("s1 %g s2 %g\n", s1, s2);
  free(b);
  return 0;
}
