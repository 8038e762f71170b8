/* copyprivate: the value the single thread computes reaches every thread's private copy. */
#include <omp.h>
#include <stdio.h>

int seen[8];
double seen2[8];

int main(void) {
  int x = -1;
  double y = 0;
#pragma omp parallel private(x, y)
  {
    int t = omp_get_thread_num();
    x = t * 100;
    y = t + 0.5;
#pragma omp single copyprivate(x, y)
    {
      x = 4242;
      y = 2.25;
    }
    seen[t] = x + t;
    seen2[t] = y * (t + 1);
  }
  /* Under default(none) only registered data travels: the value still reaches everyone. */
  int z = 0;
#pragma omp parallel default(none) private(z) shared(seen)
  {
    int t = omp_get_thread_num();
    z = -t;
#pragma omp single copyprivate(z)
    z = 777;
    seen[t] += z;
  }
  int n = omp_get_max_threads();
  for (int t = 0; t < n && t < 8; t++) printf("thread %d: %d %.2f\n", t, seen[t], seen2[t]);
  printf("x %d y %.2f\n", x, y);
  return 0;
}
