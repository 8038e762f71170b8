/* NPB-like CG: a sparse symmetric matrix in CSR, conjugate gradient iterations with
   parallel sparse matrix-vector products and dot products by reduction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define N 6000
#define NZR 9
int main(void) {
  int *rowp = malloc(sizeof(int) * (N + 1)), *col = malloc(sizeof(int) * N * NZR);
  double *val = malloc(sizeof(double) * N * NZR);
  double *x = calloc(N, sizeof(double)), *r = malloc(sizeof(double) * N), *p = malloc(sizeof(double) * N), *q = malloc(sizeof(double) * N);
  /* a banded symmetric matrix: offsets -4..4, diagonally dominant */
  int nz = 0;
  for (int i = 0; i < N; i++) {
    rowp[i] = nz;
    for (int o = -4; o <= 4; o++) {
      int j = i + o * 37;
      if (j < 0 || j >= N) continue;
      col[nz] = j;
      val[nz] = o == 0 ? 20.0 + i % 7 : -1.0 / (1 + ((i + j) % 5));
      nz++;
    }
  }
  rowp[N] = nz;
  for (int i = 0; i < N; i++) { r[i] = 1.0 + (i % 13) / 13.0; p[i] = r[i]; }
  double rho = 0;
#pragma omp parallel for reduction(+:rho)
  for (int i = 0; i < N; i++) rho += r[i] * r[i];
  for (int it = 0; it < 8; it++) {
    double pq = 0;
#pragma omp parallel for reduction(+:pq)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int k = rowp[i]; k < rowp[i + 1]; k++) s += val[k] * p[col[k]];
      q[i] = s;
      pq += p[i] * s;
    }
    double alpha = rho / pq, rho2 = 0;
#pragma omp parallel for reduction(+:rho2)
    for (int i = 0; i < N; i++) { x[i] += alpha * p[i]; r[i] -= alpha * q[i]; rho2 += r[i] * r[i]; }
    double beta = rho2 / rho;
    rho = rho2;
#pragma omp parallel for
    for (int i = 0; i < N; i++) p[i] = r[i] + beta * p[i];
    printf("cg iteration %d: log10 residual %.3f\n", it, log10(sqrt(rho)));
  }
  double xs = 0;
  for (int i = 0; i < N; i++) xs += x[i];
  printf("cg sum of x %.6g x[100] %.6g\n", xs, x[100]);
  return 0;
}
