/* sprintf into per-thread slices of a shared char buffer, then printed;
 * snprintf results used after the region; strings built in a parallel for. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#define W 32
#define MAXT 16
char buf[MAXT * W];
char lines[100][24];
int main(void) {
  int nt = 1;
  memset(buf, '.', sizeof buf);
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp single
    nt = omp_get_num_threads();
    snprintf(buf + t * W, W, "thread %d of %d says %x", t, omp_get_num_threads(), t * 4099);
  }
#pragma omp parallel for schedule(static, 1)
  for (int i = 0; i < 100; i++) sprintf(lines[i], "<%03d:%5.2f>", i, i / 8.0);
  for (int t = 0; t < nt; t++) printf("%s\n", buf + t * W);
  size_t tot = 0; for (int i = 0; i < 100; i++) tot += strlen(lines[i]);
  printf("%s %s %s tot %zu tail %c\n", lines[0], lines[57], lines[99], tot, buf[nt * W]);
  return 0;
}
