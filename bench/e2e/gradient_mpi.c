/* MPI version of gradient.c: blocks of x, one value exchanged with each neighbour per step;
 * rank 0 gathers x for the same checksum. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int iters = argc > 2 ? atoi(argv[2]) : 200;
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int p = 0; p < size; p++) {
    displs[p] = (int)((long)n * p / size);
    counts[p] = (int)((long)n * (p + 1) / size) - displs[p];
  }
  int lo = displs[rank], m = counts[rank];
  /* Local x with one ghost value each side: x[0] is global lo-1, x[m+1] global lo+m. */
  double *x = calloc(m + 2, sizeof(double)), *xn = calloc(m + 2, sizeof(double)), *t = malloc(sizeof(double) * (m + 2));
  for (int r = 0; r < m; r++) t[r + 1] = (double)(((lo + r) * 13) % 29) - 14.0;
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  const double step = 0.1;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < iters; k++) {
    MPI_Sendrecv(&x[1], 1, MPI_DOUBLE, left, 0, &x[m + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&x[m], 1, MPI_DOUBLE, right, 1, &x[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 1; r <= m; r++) {
      int i = lo + r - 1;
      double g = 2 * (x[r] - t[r]);
      if (i > 0) g += 2 * (x[r] - x[r - 1]);
      if (i < n - 1) g -= 2 * (x[r + 1] - x[r]);
      xn[r] = x[r] - step * g;
    }
    double *w = x;
    x = xn;
    xn = w;
  }
  double t1 = MPI_Wtime();
  double *all = rank == 0 ? malloc(sizeof(double) * n) : NULL;
  MPI_Gatherv(&x[1], m, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double s = 0;
    for (int i = 0; i < n; i++) s += all[i] * (double)(i % 5 + 1);
    printf("gradient n=%d iters=%d checksum=%.12e x0=%.12e\n", n, iters, s, all[0]);
    /* Per step: one value each way across each of the size-1 boundaries. */
    fprintf(stderr, "bench: seconds %.6f regions %d mpi-bytes %ld\n", t1 - t0, iters, 2L * (size - 1) * (long)sizeof(double));
  }
  MPI_Finalize();
  return 0;
}
