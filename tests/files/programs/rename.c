/* Write to a temporary name, then rename over the real one (an atomic update), twice, and read
 * the result back into a region. */
#include <stdio.h>

#define N 500
static long a[N];

static int save(long x) {
  FILE *f = fopen("state.txt.tmp", "w");
  if (!f) { perror("state.txt.tmp"); return 1; }
  fprintf(f, "%ld\n", x);
  if (fclose(f) != 0) return 1;
  if (rename("state.txt.tmp", "state.txt") != 0) { perror("rename"); return 1; }
  return 0;
}

int main(void) {
  if (save(5)) return 1;
  long s = 0;
  for (int round = 0; round < 2; round++) {
    long x = 0;
    FILE *f = fopen("state.txt", "r");
    if (!f || fscanf(f, "%ld", &x) != 1) { fprintf(stderr, "state.txt unreadable\n"); return 1; }
    fclose(f);
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = x * i;
    s = 0;
    for (int i = 0; i < N; i++) s += a[i];
    if (save(s % 1000 + round)) return 1;
  }
  FILE *t = fopen("state.txt.tmp", "r");
  printf("rename sum %ld tmp %s\n", s, t ? "still there" : "gone");
  if (t) fclose(t);
  return 0;
}
