/* The papers' MPI reference for the matrix product (001_3036025dc34c4021.txt Sect. V,
 * 003_45ed75503520c8f4.txt Sect. VI: "the MPI program has been developed for reference as
 * exchanges to keep all processes consistent between nodes are kept minimal"): every rank
 * builds A and B itself (they are computed, not read, so nothing needs to be sent), computes
 * its block of rows of C (the same static split as an OpenMP `parallel for`), and rank 0
 * gathers C: the only exchange. Prints the same line as mamult.c, and each rank's phases on
 * stderr, named as 001's Fig. 4 (Before: nothing to send here; Update: the gather):
 *   mamult-mpi rank R init S before S compute S update S
 *   mamult_mpi [N]      N <= MAX_N, default 600 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef MAX_N
#define MAX_N 2000
#endif
static double A[MAX_N][MAX_N], B[MAX_N][MAX_N], C[MAX_N][MAX_N];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double t_start = MPI_Wtime();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 600;
  if (n < 1 || n > MAX_N) {
    if (rank == 0) fprintf(stderr, "mamult_mpi: N must be 1..%d\n", MAX_N);
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
  int lo = displs[rank], hi = displs[rank] + counts[rank];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = lo; i < hi; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  double t1 = MPI_Wtime();
  if (rank == 0)
    MPI_Gatherv(MPI_IN_PLACE, 0, row, C, counts, displs, row, 0, MPI_COMM_WORLD);
  else
    MPI_Gatherv(C[lo], counts[rank], row, NULL, NULL, NULL, row, 0, MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  if (rank == 0) {
    double sum = 0, weighted = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        sum += C[i][j];
        weighted += C[i][j] * (double)((i + 2 * j) % 5);
      }
    printf("mamult n=%d sum=%.6f weighted=%.6f c[0][0]=%.3f c[n-1][n-1]=%.3f\n", n, sum, weighted, C[0][0],
           C[n - 1][n - 1]);
    fprintf(stderr, "mamult: compute %.3f s\n", t2 - t0);
  }
  fprintf(stderr, "mamult-mpi rank %d init %.6f before 0 compute %.6f update %.6f bytes %ld\n", rank, t0 - t_start,
          t1 - t0, t2 - t1, rank == 0 ? (long)(n - counts[0]) * n * (long)sizeof(double) : (long)counts[rank] * n * (long)sizeof(double));
  MPI_Finalize();
  return 0;
}
