/* The matrix product of tests/cape1/programs/fig2.c as an OpenMP program (three sections,
 * a band of rows each), for the CAPE-2 side of complete_vs_incremental.sh: same data, same
 * split, so the checkpoints compare like with like. Usage: matmul_sections [N] */
#include <stdio.h>
#include <stdlib.h>

enum { NS = 3 };
static int n = 120;
static double *a, *b, *c;

static void band(int k) {
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
#pragma omp parallel sections
  {
#pragma omp section
    band(0);
#pragma omp section
    band(1);
#pragma omp section
    band(2);
  }
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += c[i];
  printf("n %d sum %.1f\n", n, sum);
  return 0;
}
