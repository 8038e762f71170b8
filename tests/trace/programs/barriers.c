/* A `parallel` region with two worksharing loops: the implicit barrier after each `for` and
 * the region's end are three exchanges, so the trace alternates Compute and Update three times
 * (monitor/trace.h). Prints a checksum that needs the first loop's results on every node. */
#include <stdio.h>
static double a[1000], b[1000];
int main(void) {
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < 1000; i++) a[i] = i * 0.5;
#pragma omp for
    for (int i = 0; i < 1000; i++) b[i] = a[999 - i] + 1;
  }
  double s = 0;
  for (int i = 0; i < 1000; i++) s += b[i];
  printf("s=%.1f\n", s);
  return 0;
}
