/* copyin, and neighbouring words written by the master and the slaves (issue 14, session 10):
 * the master's copyin window puts its region number one ahead of the slaves', whose parts must
 * still merge with the master's by their bytes (002 Def. 4.2: the later timestamp wins only
 * where both wrote). Before the fix, a `parallel copyin(...)` region whose thread 0 wrote
 * g[0] and g[3] lost the slaves' g[1] and g[2], silently. */
#include <omp.h>
#include <stdio.h>

static int counter = 1;
#pragma omp threadprivate(counter)
int g[64], h[64];

int main(void) {
  omp_set_dynamic(0);
  counter = 20;
#pragma omp parallel copyin(counter)
  {
    int t = omp_get_thread_num();
    g[t] = counter + t;
    g[t + 3] = counter + t + 3;
  }
  printf("parallel copyin: %d %d %d %d %d %d\n", g[0], g[1], g[2], g[3], g[4], g[5]);
  counter = 40;
#pragma omp parallel for copyin(counter) schedule(static, 1)
  for (int k = 0; k < 6; k++) h[k] = counter + k;
  printf("parallel for copyin: %d %d %d %d %d %d\n", h[0], h[1], h[2], h[3], h[4], h[5]);
  counter = 60;
#pragma omp parallel sections copyin(counter)
  {
#pragma omp section
    { g[0] = counter; g[3] = counter + 3; }
#pragma omp section
    g[1] = counter + 1;
#pragma omp section
    g[2] = counter + 2;
  }
  printf("parallel sections copyin: %d %d %d %d\n", g[0], g[1], g[2], g[3]);
  return 0;
}
