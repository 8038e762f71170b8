/* PolyBench's own style: kernel functions with variably modified array parameters, the loop
   variables declared at the top and listed private, arrays allocated with posix_memalign
   (gemm), on main's stack (mvt) or static in main (scale), and a trmm-like triangular loop. */
#include <stdio.h>
#include <stdlib.h>
#define NI 70
#define NJ 80
#define NK 90
static void *alloc(size_t n) { void *p; if (posix_memalign(&p, 64, n)) abort(); return p; }
static void init(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], double B[nk][nj]) {
  int i, j;
  for (i = 0; i < ni; i++) for (j = 0; j < nj; j++) C[i][j] = (double)((i * j + 1) % ni) / ni;
  for (i = 0; i < ni; i++) for (j = 0; j < nk; j++) A[i][j] = (double)(i * (j + 1) % nk) / nk;
  for (i = 0; i < nk; i++) for (j = 0; j < nj; j++) B[i][j] = (double)(i * (j + 2) % nj) / nj;
}
static void kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj], double A[ni][nk], double B[nk][nj]) {
  int i, j, k;
#pragma omp parallel for private(j, k)
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++) C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
}
static void kernel_mvt(int n, double x1[n], double x2[n], double y1[n], double y2[n], double A[n][n]) {
  int i, j;
#pragma omp parallel
  {
#pragma omp for private(j)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) x1[i] = x1[i] + A[i][j] * y1[j];
#pragma omp for private(j)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) x2[i] = x2[i] + A[j][i] * y2[j];
  }
}
static void kernel_trmm(int m, int n, double alpha, double A[m][m], double B[m][n]) {
  int i, j, k;
#pragma omp parallel for private(i, k)
  for (j = 0; j < n; j++)
    for (i = 0; i < m; i++) {
      for (k = i + 1; k < m; k++) B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
}
static void kernel_scale(int n, double v[n], double f) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) v[i] *= f + i % 3;
}
int main(void) {
  int ni = NI, nj = NJ, nk = NK, n = 60;
  double (*C)[NJ] = alloc(sizeof(double[NI][NJ])), (*A)[NK] = alloc(sizeof(double[NI][NK])), (*B)[NJ] = alloc(sizeof(double[NK][NJ]));
  init(ni, nj, nk, C, A, B);
  kernel_gemm(ni, nj, nk, 1.5, 1.2, C, A, B);
  double x1[60], x2[60], y1[60], y2[60], M[60][60];  /* main's stack */
  for (int i = 0; i < n; i++) {
    x1[i] = (double)(i % n) / n; x2[i] = (double)((i + 1) % n) / n; y1[i] = (double)((i + 3) % n) / n; y2[i] = (double)((i + 4) % n) / n;
    for (int j = 0; j < n; j++) M[i][j] = (double)(i * j % n) / n;
  }
  kernel_mvt(n, x1, x2, y1, y2, M);
  double (*T)[NI] = alloc(sizeof(double[NI][NI]));
  for (int i = 0; i < NI; i++) for (int j = 0; j < NI; j++) T[i][j] = (double)((i + j) % NI) / NI;
  kernel_trmm(NI, NJ, 1.5, T, C);
  static double sv[500];  /* a static local of main, written by kernel_scale's region */
  for (int i = 0; i < 500; i++) sv[i] = i;
  kernel_scale(500, sv, 0.5);
  double sc = 0, sx = 0, ss = 0;
  for (int i = 0; i < 500; i++) ss += sv[i];
  for (int i = 0; i < ni; i++) for (int j = 0; j < nj; j++) sc += C[i][j] * ((i + j) % 4);
  for (int i = 0; i < n; i++) sx += x1[i] + 2 * x2[i];
  printf("gemm+trmm checksum %.10g C[5][7] %.10g\nmvt checksum %.10g\nscale checksum %.10g\n", sc, C[5][7], sx, ss);
  return 0;
}
