/* PolyBench-like atax (y = A^T (A x), the second product as an array reduction), bicg
   (s = A^T r, q = A p) and gemver (rank-2 update, then two matrix-vector products). */
#include <stdio.h>
#include <stdlib.h>
#define M 190
#define N 210
static double A[M][N], x[N], y[N], tmp[M], r[M], p[N], s[N], q[M];
static double G[N][N], u1[N], v1[N], u2[N], v2[N], gw[N], gx[N], gy[N], gz[N];
int main(void) {
  for (int i = 0; i < M; i++) { r[i] = (double)(i % M) / M; for (int j = 0; j < N; j++) A[i][j] = (double)((i + j) % N) / (5 * M); }
  for (int j = 0; j < N; j++) { x[j] = 1 + (double)j / N; p[j] = (double)(j % N) / N; }
  /* atax */
#pragma omp parallel for
  for (int i = 0; i < M; i++) { tmp[i] = 0; for (int j = 0; j < N; j++) tmp[i] += A[i][j] * x[j]; }
#pragma omp parallel for reduction(+:y[:N])
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) y[j] += A[i][j] * tmp[i];
  /* bicg */
#pragma omp parallel for
  for (int j = 0; j < N; j++) { s[j] = 0; for (int i = 0; i < M; i++) s[j] += r[i] * A[i][j]; }
#pragma omp parallel for
  for (int i = 0; i < M; i++) { q[i] = 0; for (int j = 0; j < N; j++) q[i] += A[i][j] * p[j]; }
  /* gemver */
  double alpha = 1.5, beta = 1.2;
  for (int i = 0; i < N; i++) {
    u1[i] = i; u2[i] = (i + 1) / (double)N / 2.0; v1[i] = (i + 1) / (double)N / 4.0; v2[i] = (i + 1) / (double)N / 6.0;
    gy[i] = (i + 1) / (double)N / 8.0; gz[i] = (i + 1) / (double)N / 9.0; gx[i] = 0; gw[i] = 0;
    for (int j = 0; j < N; j++) G[i][j] = (double)(i * j % N) / N;
  }
#pragma omp parallel for
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) G[i][j] += u1[i] * v1[j] + u2[i] * v2[j];
#pragma omp parallel for
  for (int i = 0; i < N; i++) { for (int j = 0; j < N; j++) gx[i] += beta * G[j][i] * gy[j]; gx[i] += gz[i]; }
#pragma omp parallel for
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) gw[i] += alpha * G[i][j] * gx[j];
  double ya = 0, sa = 0, qa = 0, wa = 0;
  for (int j = 0; j < N; j++) { ya += y[j]; sa += s[j] * (j % 5); wa += gw[j]; }
  for (int i = 0; i < M; i++) qa += q[i] * (i % 7);
  printf("atax %.8g y[3] %.8g\nbicg %.10g %.10g\ngemver %.10g w[5] %.10g\n", ya, y[3], sa, qa, wa, gw[5]);
  return 0;
}
