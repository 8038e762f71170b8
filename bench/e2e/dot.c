/* End-to-end benchmark (scripts/bench-e2e.sh): a reduction in many small regions. Each of
 * ITERS steps is one `parallel for reduction(+: s)` over N elements (a dot product of two
 * integer vectors, the second shifted by the step), whose sum the sequential part folds into
 * a checksum: per region, the clause call, the partial sums' merge (002_2c61c2cb27f62a9a.txt
 * Def. 4.2: the reduction operator) and the result's broadcast, with almost no data written.
 * Integers: the same bits natively, under cape and in dot_mpi.c (MPI_Allreduce).
 *   dot [N [ITERS]]      default 30000 500 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 30000;
  int iters = argc > 2 ? atoi(argv[2]) : 500;
  if (n < 1 || iters < 1) {
    fprintf(stderr, "dot: N and ITERS must be >= 1\n");
    return 2;
  }
  long *x = malloc(sizeof(long) * n), *y = malloc(sizeof(long) * n);
  if (!x || !y) {
    fprintf(stderr, "dot: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    x[i] = (i * 7) % 13 - 6;
    y[i] = (i * 11) % 17 - 8;
  }
  unsigned long check = 0;
  double t0 = omp_get_wtime();
  for (int k = 0; k < iters; k++) {
    long s = 0;
#pragma omp parallel for reduction(+: s)
    for (int i = 0; i < n; i++) s += x[i] * (y[i] + k);
    check = check * 1000003UL + (unsigned long)s;
  }
  double t1 = omp_get_wtime();
  printf("dot n=%d iters=%d checksum=%lu\n", n, iters, check);
  fprintf(stderr, "bench: seconds %.6f regions %d\n", t1 - t0, iters);
  return 0;
}
