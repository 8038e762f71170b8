/* Library state changed by one thread: rand() in a single, then rand() again
 * in the sequential part feeding a parallel for; strtok's hidden state; a big
 * local array of main (stack pages) written by a parallel for; a threadprivate
 * static declared inside a function. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int bump(void) {
  static int calls;
#pragma omp threadprivate(calls)
  return ++calls;
}
int main(void) {
  double grid[120][130];
  int first = 0, bumps = 0;
  srand(12345);
  int r0 = rand();
#pragma omp parallel
  {
#pragma omp single
    first = rand() % 1000;
#pragma omp for
    for (int i = 0; i < 120; i++)
      for (int j = 0; j < 130; j++) grid[i][j] = i * 0.5 + j;
    bump();
#pragma omp master
    bumps = bump();
  }
  int y = rand() % 1000;
  long s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < 1000; i++) s += (y + i) % 7;
  char text[] = "alpha,beta,,gamma,delta";
  char *tok = strtok(text, ",");
  int ntok = 0, len = 0;
  while (tok) {
    ntok++;
#pragma omp parallel for reduction(+: len)
    for (int k = 0; k < (int)strlen(tok); k++) len += tok[k] == 'a';
    tok = strtok(NULL, ",");
  }
  double gs = 0;
  for (int i = 0; i < 120; i++) for (int j = 0; j < 130; j++) gs += grid[i][j];
  printf("r0 %d first %d y %d s %ld ntok %d len %d gs %.6g bumps %d\n", r0, first, y, s, ntok, len, gs, bumps);
  return 0;
}
