/* PolyBench-like covariance: column means, centred data, the symmetric covariance matrix with a
   triangular loop (each row writes its mirror). */
#include <stdio.h>
#include <stdlib.h>
#define N 260
#define M 120
int main(void) {
  double (*data)[M] = malloc(sizeof(double[N][M])), (*cov)[M] = malloc(sizeof(double[M][M]));
  double *mean = malloc(sizeof(double) * M);
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) data[i][j] = ((double)i * j) / M + (i * 7 + j * 3) % 11;
#pragma omp parallel for
  for (int j = 0; j < M; j++) { mean[j] = 0; for (int i = 0; i < N; i++) mean[j] += data[i][j]; mean[j] /= N; }
#pragma omp parallel for
  for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) data[i][j] -= mean[j];
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < M; i++)
    for (int j = i; j < M; j++) {
      double c = 0;
      for (int k = 0; k < N; k++) c += data[k][i] * data[k][j];
      cov[i][j] = cov[j][i] = c / (N - 1);
    }
  double tr = 0, off = 0;
  for (int i = 0; i < M; i++) { tr += cov[i][i]; for (int j = 0; j < M; j++) if (i != j) off += cov[i][j] * ((i ^ j) & 3); }
  printf("covariance trace %.10g off %.10g cov[3][40] %.10g cov[40][3] %.10g\n", tr, off, cov[3][40], cov[40][3]);
  return 0;
}
