/* A log appended before the first region, and between regions: gcc -fopenmp writes each line
 * once; every node used to (one line per node). */
#include <stdio.h>

#define N 4000
static double a[N];

static void log_line(const char *what, double v) {
  FILE *f = fopen("up_log.txt", "a");
  if (!f) { perror("up_log.txt"); return; }
  fprintf(f, "%s %.3f\n", what, v);
  fclose(f);
}

int main(void) {
  log_line("run start", 0);
  double s = 0;
  for (int step = 0; step < 3; step++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = a[i] * 0.5 + i * (step + 1);
    s = 0;
    for (int i = 0; i < N; i++) s += a[i];
    log_line("step", s);
  }
  printf("applog sum %.3f\n", s);
  return 0;
}
