/* return 1 from main after the regions (no atexit): the status must be 1;
 * a region inside a loop whose trip count comes from the data. */
#include <omp.h>
#include <stdio.h>
double u[3000], w[3000];
int main(void) {
  for (int i = 0; i < 3000; i++) u[i] = (i % 10) * 1.0;
  int it = 0;
  double diff = 1;
  while (diff > 0.5 && it < 50) {
    diff = 0;
#pragma omp parallel for reduction(max: diff)
    for (int i = 1; i < 2999; i++) {
      w[i] = (u[i - 1] + u[i] * 2 + u[i + 1]) * 0.25;
      double dd = w[i] > u[i] ? w[i] - u[i] : u[i] - w[i];
      if (dd > diff) diff = dd;
    }
#pragma omp parallel for
    for (int i = 1; i < 2999; i++) u[i] = w[i];
    it++;
  }
  printf("it %d diff %.6g u[5] %.6g\n", it, diff, u[5]);
  return diff < 0.5;
}
