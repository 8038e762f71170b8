/* Checks whether an output exists before writing it (access, stat): a slave behind the master
 * must see what the master saw then, not the master's newer files. `made` is static: the
 * determinism check would stop a node that counted differently; `size_seen` is a local. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 700
static double a[N];
static int made;

int main(void) {
  long size_seen = 0;
  for (int t = 0; t < 4; t++) {
    char name[32];
    snprintf(name, sizeof name, "out_%d.txt", t % 2);
    if (access(name, F_OK) != 0) {
      FILE *f = fopen(name, "w");
      if (!f) return 1;
      fprintf(f, "made at step %d\n", t);
      fclose(f);
      made++;
    }
    struct stat st;
    if (stat(name, &st) == 0) size_seen += st.st_size;
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] += (double)size_seen / (i + 1);
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += a[i];
  printf("exists made %d size %ld sum %.6f\n", made, size_seen, s);
  return 0;
}
