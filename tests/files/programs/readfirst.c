/* Read a file if it is there, then write it: a slave behind the master must not read what the
 * master wrote (the master saves what the file held, here "absent", before it writes). `prev`
 * is a local, which no determinism check compares: a slave that read the master's file would
 * compute its share with another value, silently. */
#include <stdio.h>

#define N 900
static long a[N];

int main(void) {
  long prev = 0;
  FILE *f = fopen("runs.txt", "r");
  if (f) {
    if (fscanf(f, "%ld", &prev) != 1) prev = -1;
    fclose(f);
  }
  f = fopen("runs.txt", "w");
  if (!f) { perror("runs.txt"); return 1; }
  fprintf(f, "%ld\n", prev + 1000);
  fclose(f);
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = i + prev;
  long s = 0;
  for (int i = 0; i < N; i++) s += a[i];
  printf("readfirst prev %ld sum %ld\n", prev, s);
  return 0;
}
