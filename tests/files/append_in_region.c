/* A loop body appends (in a critical) to a log the sequential part wrote: on a slave that path
 * is its own copy, so its lines go there, not to the file: each slave must say so, once. */
#include <stdio.h>
static int a[8];
int main(void) {
  FILE *f = fopen("body_log.txt", "w");
  fprintf(f, "start\n");
  fclose(f);
#pragma omp parallel for
  for (int i = 0; i < 8; i++) {
    a[i] = i;
#pragma omp critical
    {
      FILE *g = fopen("body_log.txt", "a");
      if (g) { fprintf(g, "i %d\n", i); fclose(g); }
    }
  }
#pragma omp parallel for
  for (int i = 0; i < 8; i++) a[i] += 1;
  printf("%d\n", a[7]);
  return 0;
}
