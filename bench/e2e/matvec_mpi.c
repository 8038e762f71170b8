/* MPI version of matvec.c: each rank holds its block of rows, y gathered on every rank
 * (MPI_Allgatherv) for the next iteration. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  int iters = argc > 2 ? atoi(argv[2]) : 10;
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int p = 0; p < size; p++) {
    displs[p] = (int)((long)n * p / size);
    counts[p] = (int)((long)n * (p + 1) / size) - displs[p];
  }
  int lo = displs[rank], rows = counts[rank];
  double *a = malloc(sizeof(double) * (long)rows * n + 1), *x = malloc(sizeof(double) * n),
         *y = malloc(sizeof(double) * n), *ly = malloc(sizeof(double) * (rows + 1));
  for (int i = 0; i < n; i++) x[i] = 1.0;
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < n; j++) {
      int i = lo + r;
      a[(long)r * n + j] = (double)((i * 7 + j * 3) % 17) * 0.25 + (i == j);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double norm = 0;
  for (int t = 0; t < iters; t++) {
    for (int r = 0; r < rows; r++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += a[(long)r * n + j] * x[j];
      ly[r] = s;
    }
    MPI_Allgatherv(ly, rows, MPI_DOUBLE, y, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    norm = 0;
    for (int i = 0; i < n; i++) norm += y[i] * y[i];
    norm = sqrt(norm);
    for (int i = 0; i < n; i++) x[i] = y[i] / norm;
  }
  double t1 = MPI_Wtime();
  if (rank == 0) {
    printf("matvec n=%d iters=%d norm=%.12e x0=%.12e xlast=%.12e\n", n, iters, norm, x[0], x[n - 1]);
    /* Per iteration: every rank receives the n - rows values of y it did not compute. */
    fprintf(stderr, "bench: seconds %.6f regions %d mpi-bytes %ld\n", t1 - t0, iters, (long)(size - 1) * n * (long)sizeof(double));
  }
  MPI_Finalize();
  return 0;
}
