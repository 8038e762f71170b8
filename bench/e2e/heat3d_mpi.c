/* MPI version of heat3d.c: planes in blocks, one halo plane exchanged with each neighbour
 * per step; rank 0 gathers the grid for the same checksum. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double initial(int i, int j, int k, int n) {
  if (i == 0 || j == 0 || k == 0) return 100.0;
  if (i == n - 1 || j == n - 1 || k == n - 1) return 10.0;
  return (double)((i * 31 + j * 17 + k * 7) % 101);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 160;
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  long nn = (long)n * n;
  /* Interior planes 1..n-2 split as a static schedule would. */
  int inner = n - 2, lo = 1 + (int)((long)inner * rank / size), hi = 1 + (int)((long)inner * (rank + 1) / size);
  int planes = hi - lo + 2; /* with one halo plane each side: global planes lo-1 .. hi */
  double *u = malloc(sizeof(double) * planes * nn), *v = malloc(sizeof(double) * planes * nn);
  for (int r = 0; r < planes; r++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) u[r * nn + j * n + k] = v[r * nn + j * n + k] = initial(lo - 1 + r, j, k, n);
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  const double c = 0.1;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int t = 0; t < iters; t++) {
    for (int r = 1; r < planes - 1; r++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++) {
          long x = r * nn + j * n + k;
          v[x] = u[x] + c * (u[x - nn] + u[x + nn] + u[x - n] + u[x + n] + u[x - 1] + u[x + 1] - 6.0 * u[x]);
        }
    MPI_Sendrecv(&v[1 * nn], (int)nn, MPI_DOUBLE, up, 0, &v[(planes - 1) * nn], (int)nn, MPI_DOUBLE, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&v[(planes - 2) * nn], (int)nn, MPI_DOUBLE, down, 1, &v[0], (int)nn, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double *w = u;
    u = v;
    v = w;
  }
  double t1 = MPI_Wtime();
  /* Gather the interior planes (rank 0 knows the fixed first and last). */
  double *all = rank == 0 ? malloc(sizeof(double) * nn * n) : NULL;
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int p = 0; p < size; p++) {
    int plo = 1 + (int)((long)inner * p / size), phi = 1 + (int)((long)inner * (p + 1) / size);
    counts[p] = (int)((phi - plo) * nn);
    displs[p] = (int)(plo * nn);
  }
  MPI_Gatherv(&u[nn], (int)((hi - lo) * nn), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) {
        all[j * n + k] = initial(0, j, k, n);
        all[(n - 1) * nn + j * n + k] = initial(n - 1, j, k, n);
      }
    double s = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++) s += all[i * nn + j * n + k] * (double)((i + 2 * j + 3 * k) % 7);
    printf("heat3d n=%d iters=%d checksum=%.9e centre=%.9e\n", n, iters, s, all[(n / 2) * nn + (n / 2) * n + n / 2]);
    /* Per step: one halo plane each way across each of the size-1 boundaries. */
    fprintf(stderr, "bench: seconds %.6f regions %d mpi-bytes %ld\n", t1 - t0, iters,
            2L * (size - 1) * nn * (long)sizeof(double));
  }
  MPI_Finalize();
  return 0;
}
