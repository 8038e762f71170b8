/* `critical` inside a worksharing `for` of a `parallel` region, on a global (the region's
 * own loop index is shared and written only by the loop). */
#include <stdio.h>

int s;
int main(void) {
  int i;
#pragma omp parallel
  {
#pragma omp for
    for (i = 0; i < 10; i++)
#pragma omp critical
      s += i;
  }
  printf("s %d\n", s);
  return 0;
}
