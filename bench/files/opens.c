/* Cost of libcape's file routing (runtime/src/files.c, docs/monitor.md "Files"): 20000 opens
 * of an input file (never written), 20000 of a file the program wrote (a slave's shadow), 2000
 * files written ("w", 50 names), then one region. Prints the lines read (40000) and a[999].
 *   echo input > input.txt; cape-cc -O2 -fopenmp opens.c -o opens
 *   perf stat -e task-clock,raw_syscalls:sys_enter cape run -n 3 ./opens     (shadows)
 *   CAPE_SLAVE_FILES=real perf stat ... cape run -n 3 ./opens               (the old way) */
#include <stdio.h>
static int a[1000];
int main(void) {
  char line[64];
  long n = 0;
  FILE *f = fopen("mine.txt", "w");
  fprintf(f, "mine\n");
  fclose(f);
  for (int i = 0; i < 20000; i++) {
    f = fopen("input.txt", "r");
    if (f && fgets(line, sizeof line, f)) n++;
    if (f) fclose(f);
    f = fopen("mine.txt", "r");
    if (f && fgets(line, sizeof line, f)) n++;
    if (f) fclose(f);
  }
  for (int i = 0; i < 2000; i++) {
    snprintf(line, sizeof line, "out_%d.txt", i % 50);
    f = fopen(line, "w");
    if (f) { fprintf(f, "%d\n", i); fclose(f); }
  }
#pragma omp parallel for
  for (int i = 0; i < 1000; i++) a[i] = i;
  printf("%ld %d\n", n, a[999]);
  return 0;
}
