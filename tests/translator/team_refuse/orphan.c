/* A shrunk team (omp_set_num_threads(2) on 3 nodes) whose region calls a function with a
 * barrier: the nodes beyond the team jump over the call, so the team's barrier would pair
 * with their region end; the program must stop with a message (team_refuse.sh). */
#include <omp.h>
#include <stdio.h>
static int a[64];
static void fill(void) {
  int i;
#pragma omp for
  for (i = 0; i < 64; i++) a[i] = i;
}
int main(void) {
  omp_set_num_threads(2);
  int cnt = 0;
#pragma omp parallel reduction(+: cnt)
  {
    cnt += 1;
    fill();
  }
  printf("cnt %d a %d\n", cnt, a[63]);
  return 0;
}
