/* PolyBench-like 2mm (D = alpha*A*B*C + beta*D) and syrk (C = alpha*A*A^T + beta*C, lower triangle). */
#include <stdio.h>
#include <stdlib.h>
#define NI 80
#define NJ 90
#define NK 70
#define NL 100
static double A[NI][NK], B[NK][NJ], C[NJ][NL], D[NI][NL], tmp[NI][NJ], S[NI][NI];
int main(void) {
  double alpha = 1.5, beta = 1.2;
  for (int i = 0; i < NI; i++) for (int k = 0; k < NK; k++) A[i][k] = (double)((i * k + 1) % NI) / NI;
  for (int k = 0; k < NK; k++) for (int j = 0; j < NJ; j++) B[k][j] = (double)(k * (j + 1) % NJ) / NJ;
  for (int j = 0; j < NJ; j++) for (int l = 0; l < NL; l++) C[j][l] = (double)((j * (l + 3) + 1) % NL) / NL;
  for (int i = 0; i < NI; i++) for (int l = 0; l < NL; l++) D[i][l] = (double)(i * (l + 2) % NK) / NK;
  for (int i = 0; i < NI; i++) for (int j = 0; j < NI; j++) S[i][j] = (double)((i * j + 2) % NI) / NI;
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < NI; i++)
      for (int j = 0; j < NJ; j++) {
        tmp[i][j] = 0;
        for (int k = 0; k < NK; k++) tmp[i][j] += alpha * A[i][k] * B[k][j];
      }
#pragma omp for
    for (int i = 0; i < NI; i++)
      for (int l = 0; l < NL; l++) {
        D[i][l] *= beta;
        for (int j = 0; j < NJ; j++) D[i][l] += tmp[i][j] * C[j][l];
      }
  }
#pragma omp parallel for schedule(static, 3)
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j <= i; j++) S[i][j] *= beta;
    for (int k = 0; k < NK; k++)
      for (int j = 0; j <= i; j++) S[i][j] += alpha * A[i][k] * A[j][k];
  }
  double d = 0, s = 0;
  for (int i = 0; i < NI; i++) { for (int l = 0; l < NL; l++) d += D[i][l] * ((i + l) % 3); for (int j = 0; j <= i; j++) s += S[i][j]; }
  printf("2mm checksum %.10g D[7][9] %.10g\nsyrk checksum %.10g\n", d, D[7][9], s);
  return 0;
}
