/* collapse(n) (issue 12): the collapsed iteration space is distributed, not only the outer
 * loop: with 3 nodes and 2 outer iterations the third node has work only if it is. Each
 * iteration records which thread ran it; gcc and cape-cc must agree on the schedule. */
#include <stdio.h>
#include <omp.h>
#define NI 2
#define NJ 9
#define NK 4
static int who[NI][NJ], who3[3][5][2];
static double m[NI][NJ];
int main(void) {
  int i, j;
  long s = 0;
#pragma omp parallel for collapse(2) reduction(+: s)
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++) {
      who[i][j] = omp_get_thread_num();
      m[i][j] = i * 10 + j;
      s += i * j;
    }
#pragma omp parallel
  {
#pragma omp for collapse(3) schedule(static, 2)
    for (int a = 2; a >= 0; a--) {
      for (int b = 0; b < 10; b += 2) {
        for (unsigned c = 0; c < 2; c++) who3[a][b / 2][c] = omp_get_thread_num() + 10 * (int)c;
      }
    }
  }
#pragma omp parallel for collapse(2) lastprivate(s)
  for (i = 0; i < NI; i++)
    for (j = NK; j > 0; j--) s = i * 100 + j;
  for (i = 0; i < NI; i++) {
    for (j = 0; j < NJ; j++) printf("%d:%g ", who[i][j], m[i][j]);
    printf("\n");
  }
  for (i = 0; i < 3; i++)
    for (j = 0; j < 5; j++) printf("%d,%d ", who3[i][j][0], who3[i][j][1]);
  printf("\ns=%ld i=%d j=%d\n", s, i, j);
  return 0;
}
