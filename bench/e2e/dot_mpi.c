/* MPI version of dot.c: each rank sums its block of every step's dot product and
 * MPI_Allreduce gives every rank the total (the same integer checksum). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 30000;
  int iters = argc > 2 ? atoi(argv[2]) : 500;
  if (n < 1 || iters < 1) {
    if (rank == 0) fprintf(stderr, "dot: N and ITERS must be >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long *x = malloc(sizeof(long) * n), *y = malloc(sizeof(long) * n);
  if (!x || !y) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < n; i++) {
    x[i] = (i * 7) % 13 - 6;
    y[i] = (i * 11) % 17 - 8;
  }
  int lo = (int)((long)n * rank / size), hi = (int)((long)n * (rank + 1) / size);
  unsigned long check = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < iters; k++) {
    long part = 0, s = 0;
    for (int i = lo; i < hi; i++) part += x[i] * (y[i] + k);
    MPI_Allreduce(&part, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    check = check * 1000003UL + (unsigned long)s;
  }
  double t1 = MPI_Wtime();
  if (rank == 0) {
    printf("dot n=%d iters=%d checksum=%lu\n", n, iters, check);
    /* What the algorithm moves per region: one long up from and one down to each other rank. */
    fprintf(stderr, "bench: seconds %.6f regions %d mpi-bytes %ld\n", t1 - t0, iters, 2L * (long)sizeof(long) * (size - 1));
  }
  MPI_Finalize();
  return 0;
}
