//@ files: idiom_table.txt idiom_log.txt
/* Files: a table written by the master after a region, a log line written
 * in single inside a region, a file read back in a region by every thread. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int sq[500];
int main(void) {
  FILE *f = fopen("idiom_table.txt", "w");
  if (!f) { perror("idiom_table.txt"); return 1; }
#pragma omp parallel for
  for (int i = 0; i < 500; i++) sq[i] = i * i % 1009;
  for (int i = 0; i < 500; i += 50) fprintf(f, "%d %d\n", i, sq[i]);
  fclose(f);
  long chk[64] = {0};
#pragma omp parallel
  {
#pragma omp single
    {
      FILE *g = fopen("idiom_log.txt", "a");
      fprintf(g, "region with %d threads\n", omp_get_num_threads());
      fclose(g);
    }
    FILE *r = fopen("idiom_table.txt", "r");
    int a, b; long c = 0;
    while (r && fscanf(r, "%d %d", &a, &b) == 2) c += a + b;
    if (r) fclose(r);
    chk[omp_get_thread_num()] = c;
  }
  printf("chk0 %ld chk1 %ld\n", chk[0], chk[1]);
  return 0;
}
