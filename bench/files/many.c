/* Cost of libcape's file routing for new files (docs/monitor.md "Files"): 5000 files created in
 * the sequential part (m/ must exist), then one region.
 *   mkdir m; cape-cc -O2 -fopenmp many.c -o many
 *   perf stat -e task-clock,raw_syscalls:sys_enter cape run -n 3 ./many    (CAPE_SLAVE_FILES=real: the old way) */
#include <stdio.h>
static int a[100];
int main(void) {
  char name[64];
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof name, "m/f_%d.txt", i);
    FILE *f = fopen(name, "w");
    if (!f) return 1;
    fprintf(f, "%d\n", i);
    fclose(f);
  }
#pragma omp parallel for
  for (int i = 0; i < 100; i++) a[i] = i;
  printf("%d\n", a[99]);
  return 0;
}
