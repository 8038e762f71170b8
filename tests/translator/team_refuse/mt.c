/* --model=mt: a plain region's team is every node's threads; omp_set_num_threads(2) on 2
 * nodes x 2 threads must stop the program (team_refuse.sh); --model=cape1 the same on 3 parts. */
#include <omp.h>
#include <stdio.h>
int main(void) {
  omp_set_num_threads(2);
  int cnt = 0;
#pragma omp parallel reduction(+: cnt)
  cnt += 1;
  printf("cnt %d\n", cnt);
  return 0;
}
