/* MPI version of jacobi.c: rows in blocks, one halo row exchanged with each neighbour per
 * sweep; rank 0 gathers the grid for the same checksum. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  /* Interior rows 1..n-2 split as a static schedule would. */
  int inner = n - 2, lo = 1 + (int)((long)inner * rank / size), hi = 1 + (int)((long)inner * (rank + 1) / size);
  int rows = hi - lo + 2; /* with one halo row each side: global rows lo-1 .. hi */
  double *u = malloc(sizeof(double) * rows * n), *v = malloc(sizeof(double) * rows * n);
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < n; j++) {
      int i = lo - 1 + r;
      u[r * n + j] = v[r * n + j] = (i == 0 || j == 0) ? 100.0 : (double)((i * 31 + j * 17) % 101);
    }
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int t = 0; t < iters; t++) {
    for (int r = 1; r < rows - 1; r++)
      for (int j = 1; j < n - 1; j++)
        v[r * n + j] = 0.25 * (u[(r - 1) * n + j] + u[(r + 1) * n + j] + u[r * n + j - 1] + u[r * n + j + 1]);
    MPI_Sendrecv(&v[1 * n], n, MPI_DOUBLE, up, 0, &v[(rows - 1) * n], n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&v[(rows - 2) * n], n, MPI_DOUBLE, down, 1, &v[0], n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    double *w = u;
    u = v;
    v = w;
  }
  double t1 = MPI_Wtime();
  /* Gather the interior rows (and the fixed first and last rows, which rank 0 knows). */
  double *all = rank == 0 ? malloc(sizeof(double) * n * n) : NULL;
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int p = 0; p < size; p++) {
    int plo = 1 + (int)((long)inner * p / size), phi = 1 + (int)((long)inner * (p + 1) / size);
    counts[p] = (phi - plo) * n;
    displs[p] = plo * n;
  }
  MPI_Gatherv(&u[n], (hi - lo) * n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int j = 0; j < n; j++) {
      all[j] = 100.0;
      all[(n - 1) * n + j] = j == 0 ? 100.0 : (double)(((n - 1) * 31 + j * 17) % 101);
    }
    double s = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) s += all[i * n + j] * (double)((i + 2 * j) % 7);
    printf("jacobi n=%d iters=%d checksum=%.9e centre=%.9e\n", n, iters, s, all[(n / 2) * n + n / 2]);
    /* Per sweep: one halo row each way across each of the size-1 boundaries. */
    fprintf(stderr, "bench: seconds %.6f regions %d mpi-bytes %ld\n", t1 - t0, iters, 2L * (size - 1) * n * (long)sizeof(double));
  }
  MPI_Finalize();
  return 0;
}
