/* A determinism violation: the sequential part differs between nodes (the seed depends on
 * the process id and the time), so the array the region reads differs. cape must report it
 * with the region's file:line and exit with a non-zero status, never print a wrong count
 * and exit 0. (gcc -fopenmp's program has one copy of `a` and prints "mismatches: 0".) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N 900
static int a[N], b[N];

int main(void) {
  srand((unsigned)getpid() ^ (unsigned)time(NULL));
  for (int i = 0; i < N; i++) a[i] = rand() % 1000;
#pragma omp parallel for /* contract: region begins */
  for (int i = 0; i < N; i++) {
    b[i] = a[i] * 2 + 1;
  } /* contract: region ends */
  int mismatches = 0;
  for (int i = 0; i < N; i++) mismatches += b[i] != a[i] * 2 + 1;
  printf("mismatches: %d of %d\n", mismatches, N);
  return 0;
}
