/* Benchmark (scripts/bench-critical.sh): an MPI send/receive round trip between ranks 0 and
 * 1 (8 bytes), the unit the critical entries are compared with.
 *   mpirun -np 3 pingpong_mpi N  ->  stderr "bench: roundtrip R" (us per round trip) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n = argc > 1 ? atoi(argv[1]) : 1000;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long v = 0;
  for (int warm = 0; warm < 2; warm++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int k = 0; k < n; k++) {
      if (rank == 0) {
        MPI_Send(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v++;
        MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
      }
    }
    double t = (MPI_Wtime() - t0) / n;
    if (warm == 1 && rank == 0) fprintf(stderr, "bench: roundtrip %.2f\n", t * 1e6);
  }
  MPI_Finalize();
  return 0;
}
