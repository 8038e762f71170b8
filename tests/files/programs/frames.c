/* A frame written between regions at every step, and a temporary file written, read back and
 * removed in each. */
#include <stdio.h>

#define N 2000
static double u[N], w[N];

int main(void) {
  for (int i = 0; i < N; i++) u[i] = (i % 17) * 1.5;
  for (int t = 0; t < 5; t++) {
#pragma omp parallel for
    for (int i = 1; i < N - 1; i++) w[i] = (u[i - 1] + u[i] + u[i + 1]) / 3;
    for (int i = 1; i < N - 1; i++) u[i] = w[i];
    char name[64];
    snprintf(name, sizeof name, "frame_%d.txt", t);
    FILE *f = fopen(name, "w");
    if (!f) { perror(name); return 1; }
    for (int i = 0; i < N; i += 100) fprintf(f, "%d %.6f\n", i, u[i]);
    fclose(f);
    f = fopen("scratch.tmp", "w+");
    if (!f) { perror("scratch.tmp"); return 1; }
    fprintf(f, "%.6f\n", u[N / 2]);
    rewind(f);
    double back = 0;
    if (fscanf(f, "%lf", &back) != 1) return 1;
    fclose(f);
    if (remove("scratch.tmp") != 0) { perror("remove scratch.tmp"); return 1; }
    u[0] = back;
  }
  printf("frames u[0] %.6f u[7] %.6f\n", u[0], u[7]);
  return 0;
}
