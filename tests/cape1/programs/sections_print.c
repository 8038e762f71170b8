/* The lead's reproducer (session 14): sections that print. Under --model=cape1 on `cape run`, a
 * slave's lines went to its log only (exit status 0); they must reach stdout (docs/cape1.md). */
#include <omp.h>
#include <stdio.h>
#include <string.h>
char buf[4][64];
int main(void) {
#pragma omp parallel sections
  {
#pragma omp section
    { snprintf(buf[0], 64, "alpha %d", 1); printf("sec A\n"); }
#pragma omp section
    { snprintf(buf[1], 64, "beta %d", 2); printf("sec B\n"); }
#pragma omp section
    { snprintf(buf[2], 64, "gamma %d", 3); printf("sec C\n"); }
#pragma omp section
    { snprintf(buf[3], 64, "delta %d", 4); printf("sec D\n"); }
  }
  for (int i = 0; i < 4; i++) printf("%s\n", buf[i]);
  return 0;
}
