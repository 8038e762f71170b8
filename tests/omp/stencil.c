/* A 2-D Jacobi stencil: one parallel for per time step, inside a sequential loop. */
#include <stdio.h>

#define N 64
#define STEPS 12
static double u[N][N], v[N][N];

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) u[i][j] = (i == 0 || j == 0) ? 100.0 : 0.0;
  for (int t = 0; t < STEPS; t++) {
#pragma omp parallel for schedule(static)
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
#pragma omp parallel for
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++) u[i][j] = v[i][j];
  }
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) s += u[i][j] * (i + 2 * j);
  printf("stencil checksum %.6f centre %.6f\n", s, u[N / 2][N / 2]);
  return 0;
}
