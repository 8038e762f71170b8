/* End-to-end benchmark (scripts/bench-e2e.sh): the fixed cost of a region. R empty
 * `parallel for` regions one after the other; rank 0 times them (after a few warm-up
 * regions) and prints the time per region on stderr.
 *   empty [R]      default 200 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int regions = argc > 1 ? atoi(argv[1]) : 200;
  if (regions < 1) {
    fprintf(stderr, "empty: R must be >= 1\n");
    return 2;
  }
  for (int r = 0; r < 5; r++) {
#pragma omp parallel for
    for (int i = 0; i < 3; i++) {
    }
  }
  double t0 = omp_get_wtime();
  for (int r = 0; r < regions; r++) {
#pragma omp parallel for
    for (int i = 0; i < 3; i++) {
    }
  }
  double t1 = omp_get_wtime();
  printf("empty regions=%d\n", regions);
  fprintf(stderr, "bench: seconds %.6f regions %d total %d\n", t1 - t0, regions, regions + 5);
  return 0;
}
