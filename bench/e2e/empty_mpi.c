/* MPI version of empty.c: what a region's fixed cost is compared with, a barrier and a
 * broadcast of one word per "region". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int regions = argc > 1 ? atoi(argv[1]) : 200;
  int word = 0;
  for (int r = 0; r < 5; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  double t0 = MPI_Wtime();
  for (int r = 0; r < regions; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  double t1 = MPI_Wtime();
  if (rank == 0) {
    printf("empty regions=%d\n", regions);
    /* What the algorithm moves per region: the broadcast word to every other rank. */
    fprintf(stderr, "bench: seconds %.6f regions %d total %d mpi-bytes %ld\n", t1 - t0, regions, regions + 5,
            (long)sizeof word * (size - 1));
  }
  MPI_Finalize();
  return 0;
}
