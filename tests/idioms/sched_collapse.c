//@ env: OMP_SCHEDULE=dynamic,4
/* collapse(2), schedule(static,1), (dynamic,4), (guided), (runtime) with
 * OMP_SCHEDULE, if(n > 1000) true and false, lastprivate on a collapse. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define R 37
#define C 29
int g[R][C];
unsigned h[5000];
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000;
  int who_small = 0;
#pragma omp parallel for collapse(2) schedule(static, 1)
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) g[i][j] = i * 100 + j;
#pragma omp parallel for schedule(dynamic, 4)
  for (int i = 0; i < n; i++) h[i] = (unsigned)i * 2654435761u;
#pragma omp parallel for schedule(guided)
  for (int i = 0; i < n; i++) h[i] ^= h[i] >> 7;
#pragma omp parallel for schedule(runtime)
  for (int i = n - 1; i >= 0; i--) h[i] += (unsigned)g[i % R][i % C];
  long big = 0, small = 0;
#pragma omp parallel for if(n > 1000) reduction(+: big)
  for (int i = 0; i < n; i++) big += h[i] % 1000;
#pragma omp parallel for if(n > 100000) reduction(+: small)
  for (int i = 0; i < 100; i++) { small += i; if (i == 0) who_small = omp_get_num_threads(); }
  long gs = 0; for (int i = 0; i < R; i++) for (int j = 0; j < C; j++) gs += g[i][j] * (j + 1);
  unsigned long hs = 0; for (int i = 0; i < n; i++) hs = hs * 31 + h[i];
  printf("gs %ld hs %lu big %ld small %ld team %d\n", gs, hs, big, small, who_small);
  return 0;
}
