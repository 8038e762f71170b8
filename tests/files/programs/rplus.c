/* A file updated in place with r+ (a counter at a fixed offset) before and between regions. */
#include <stdio.h>

#define N 800
static int a[N];

static int bump(int by) {
  FILE *f = fopen("counter.txt", "r+");
  if (!f) { perror("counter.txt"); return -1; }
  int c = 0;
  if (fscanf(f, "%d", &c) != 1) c = 0;
  rewind(f);
  fprintf(f, "%08d\nupdated\n", c + by);
  fclose(f);
  return c + by;
}

int main(void) {
  FILE *f = fopen("counter.txt", "w");
  if (!f) return 1;
  fprintf(f, "%08d\nnew\n", 10);
  fclose(f);
  int c = bump(1);
  for (int r = 0; r < 3; r++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] = i * c;
    long s = 0;
    for (int i = 0; i < N; i++) s += a[i];
    c = bump((int)(s % 97));
  }
  printf("rplus counter %d\n", c);
  return 0;
}
