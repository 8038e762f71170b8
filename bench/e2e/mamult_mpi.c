/* MPI version of paper-repro/mamult.c (the papers' matrix product): every rank builds A and
 * B, computes its block of rows of C, rank 0 gathers C for the same checksum. The time
 * covers the product and the gather (cape's covers the region with its exchange). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_N 2000
static double A[MAX_N][MAX_N], B[MAX_N][MAX_N], C[MAX_N][MAX_N];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 600;
  if (n < 1 || n > MAX_N) {
    if (rank == 0) fprintf(stderr, "mamult: N must be 1..%d\n", MAX_N);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.5;
      B[i][j] = (double)((i * 5 + j * 11) % 13) * 0.25;
    }
  /* A row of C as MPI sees it: n doubles, then the next row MAX_N doubles further. */
  MPI_Datatype row0, row;
  MPI_Type_contiguous(n, MPI_DOUBLE, &row0);
  MPI_Type_create_resized(row0, 0, sizeof(double) * MAX_N, &row);
  MPI_Type_commit(&row);
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int p = 0; p < size; p++) {
    int plo = (int)((long)n * p / size), phi = (int)((long)n * (p + 1) / size);
    displs[p] = plo;
    counts[p] = phi - plo;
  }
  int lo = (int)((long)n * rank / size), hi = (int)((long)n * (rank + 1) / size);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = lo; i < hi; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  if (rank == 0)
    MPI_Gatherv(MPI_IN_PLACE, 0, row, C, counts, displs, row, 0, MPI_COMM_WORLD);
  else
    MPI_Gatherv(C[lo], counts[rank], row, NULL, NULL, NULL, row, 0, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  if (rank == 0) {
    double sum = 0, weighted = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        sum += C[i][j];
        weighted += C[i][j] * (double)((i + 2 * j) % 5);
      }
    printf("mamult n=%d sum=%.6f weighted=%.6f c[0][0]=%.3f c[n-1][n-1]=%.3f\n", n, sum, weighted, C[0][0],
           C[n - 1][n - 1]);
    /* The gather: rank 0 receives the rows it did not compute. */
    fprintf(stderr, "bench: seconds %.6f regions 1 mpi-bytes %ld\n", t1 - t0, (long)(n - counts[0]) * n * (long)sizeof(double));
  }
  MPI_Finalize();
  return 0;
}
