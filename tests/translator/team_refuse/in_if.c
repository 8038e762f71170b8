/* A plain region whose `for` is inside an `if` of the region: the nodes beyond a smaller team
 * cannot jump over its code, so omp_set_num_threads(2) (-DSET=2) or OMP_NUM_THREADS=2 below
 * the node count must stop the program (team_refuse.sh), not give every node a thread. */
#include <omp.h>
#include <stdio.h>
static int a[64];
int main(int argc, char **argv) {
  (void)argv;
#ifdef SET
  omp_set_num_threads(SET);
#endif
  int cnt = 0, i;
#pragma omp parallel reduction(+: cnt)
  {
    cnt += 1;
    if (argc > 0) {
#pragma omp for
      for (i = 0; i < 64; i++) a[i] = i;
    }
  }
  printf("cnt %d a %d\n", cnt, a[63]);
  return 0;
}
