/* 003_45ed75503520c8f4.txt Fig. 2 written by hand (as tests/net/programs/fig3.c is 001's
 * Fig. 3): `parallel sections` with complete checkpoints, generalised to NS sections. The
 * master saves `original`, starts a process from it for each other section (restart_on),
 * runs section 0, saves `after0`, and merges every section's delta into `target`, then
 * continues from `target` (restart). Each section computes a band of rows of C = A x B; the
 * result is checked against a sequential product. Run it in a directory of its own: the
 * checkpoint files are made in the working directory. Usage: fig2 [N] */
#include <cape/cape.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NS = 3 };
static int n = 120;
static double *a, *b, *c;

static void section(int k) {
  int lo = n * k / NS, hi = n * (k + 1) / NS;
  for (int i = lo; i < hi; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int x = 0; x < n; x++) s += a[i * n + x] * b[x * n + j];
      c[i * n + j] = s;
    }
}

int main(int argc, char **argv) {
  if (argc > 1) n = atoi(argv[1]);
  a = malloc(sizeof(double) * n * n);
  b = malloc(sizeof(double) * n * n);
  c = calloc((size_t)n * n, sizeof(double));
  for (int i = 0; i < n * n; i++) {
    a[i] = (i % 17) * 0.5;
    b[i] = (i % 13) - 6.0;
  }
  char after[32], delta[32]; /* on each process's own stack: names of its files */

  /* #pragma omp parallel sections { section 0 } { section 1 } ... */
  int parent = cape_create_complete("original");
  if (parent) {
    cape1_copy("original", "target");
    for (int k = 1; k < NS; k++) cape1_restart_on("original", k);
    section(0);
    parent = cape_create_complete("after0");
    if (parent) {
      cape1_diff("original", "after0", "delta0");
      for (int k = 1; k < NS; k++) {
        snprintf(delta, sizeof delta, "delta%d", k);
        cape1_wait_for(delta);
        cape1_merge("target", delta);
      }
      cape1_merge("target", "delta0");
      cape1_restart("target");
    }
  } else {
    int k = cape_node_id();
    section(k);
    snprintf(after, sizeof after, "after%d", k);
    parent = cape_create_complete(after);
    if (parent) {
      snprintf(delta, sizeof delta, "delta%d", k);
      cape1_diff("original", after, delta);
      exit(0);
    }
  }
  /* After the construct: the master only, from `target`. */
  double sum = 0;
  int bad = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int x = 0; x < n; x++) s += a[i * n + x] * b[x * n + j];
      if (s != c[i * n + j]) bad++;
      sum += c[i * n + j];
    }
  printf("n %d sum %.1f wrong %d\n", n, sum, bad);
  printf(bad ? "FAILED\n" : "EXIT-SUCCESS\n");
  return bad != 0;
}
