/* VECTOR (002_2c61c2cb27f62a9a.txt Fig. 8, as paper-repro/vector.c) written by hand with the
 * CAPE runtime calls, the way 002 instruments it: the clause calls of Table 2 before the
 * region's start(), every node running the `parallel` region on its own share of both loops
 * (static schedule, split as libgomp splits it), then Fig. 3's end of region: the slaves
 * create and send their part, the master waits for and merges them (wait_for), injects the
 * result; this region is the program's last, so the slaves exit (Fig. 3 line 25).
 *   vector_cape [N [M [dickpt|tickpt]]]    under `cape run -n K`; prints what vector.c prints */
#include <cape/cape.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MAX_N
#define MAX_N 16000
#endif

static int A[MAX_N], B[MAX_N], Y[MAX_N], Z[MAX_N];

/* Thread `t` of `nt`'s share [lo, hi) of `count` iterations (libgomp's static schedule). */
static void share(long count, int t, int nt, long *lo, long *hi) {
  long q = count / nt, r = count % nt;
  if (t < r) {
    q++;
    r = 0;
  }
  *lo = q * t + r;
  *hi = *lo + q;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  int m = argc > 2 ? atoi(argv[2]) : n;
  int tickpt = argc > 3 && strcmp(argv[3], "tickpt") == 0;
  if (n < 2 || n > MAX_N || m < 1 || m > MAX_N) {
    fprintf(stderr, "vector_cape: N must be 2..%d and M 1..%d\n", MAX_N, MAX_N);
    return 2;
  }
  cape_set_ckpt_model(tickpt ? CAPE_CKPT_TICKPT : CAPE_CKPT_DICKPT);
  for (int k = 0; k < MAX_N; k++) {
    A[k] = k % 7;
    Z[k] = k % 11 + 1;
  }

  /* #pragma omp parallel firstprivate(A, Z) shared(B, Y) private(i, j) */
  int nodes = cape_region_begin("vector_cape.c:vector2");
  cape_set_shared(B, sizeof B);
  cape_set_shared(Y, sizeof Y);
  cape_set_firstprivate(A, sizeof A);
  cape_set_firstprivate(Z, sizeof Z);
  cape_start();
  int me = cape_node_id();
  long lo, hi;
  /* #pragma omp for nowait: i = 1 .. n-1 */
  share(n - 1, me, nodes, &lo, &hi);
  for (long i = 1 + lo; i < 1 + hi; i++) {
    for (int j = 0; j < n; j += 20) A[j] = A[j] + 10.25;
    B[i] = (A[i] + A[i - 1]) / 2;
  }
  /* #pragma omp for nowait: i = 0 .. m-1 */
  share(m, me, nodes, &lo, &hi);
  for (long i = lo; i < hi; i++) {
    for (int j = 0; j < m; j += 20) Z[j] = Z[j] * 0.025;
    Y[i] = Z[i] * i;
  }
  /* The end of the region (001 Fig. 3 lines 6-9, 18-20, 25). */
  cape_create("after");
  cape_stop();
  if (cape_master()) {
    cape_wait_for("after");
    cape_inject("after");
  } else {
    cape_send("after", 0);
    exit(0);
  }

  long sb = 0, sy = 0;
  for (int k = 0; k < n; k++) sb += (long)B[k] * (k % 13 + 1);
  for (int k = 0; k < m; k++) sy += (long)Y[k] * (k % 13 + 1);
  printf("vector n=%d m=%d B=%ld Y=%ld\n", n, m, sb, sy);
  return 0;
}
