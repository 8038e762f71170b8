/* Every canonical loop form of OpenMP: <, <=, >, >=, !=; ++, --, +=, -=, v = v + s;
 * signed and unsigned; expressions as bounds; the variable declared before or in the loop. */
#include <stdio.h>

#define N 103
static int hit[16][N + 8];

static int bound(int x) { return x - 3; }

int main(void) {
  int i;
  unsigned u;
  long l;
  int n = N, lo = 2;
#pragma omp parallel for
  for (i = 0; i < n; i++) hit[0][i] += 1;
#pragma omp parallel for
  for (i = lo; i <= n - 1; ++i) hit[1][i] += 1;
#pragma omp parallel for
  for (i = n - 1; i >= 0; i--) hit[2][i] += 1;
#pragma omp parallel for
  for (i = n; i > lo * 2; --i) hit[3][i] += 1;
#pragma omp parallel for
  for (i = 0; i != n; i++) hit[4][i] += 1;
#pragma omp parallel for
  for (i = n; i != 0; i--) hit[5][i] += 1;
#pragma omp parallel for
  for (i = 1; i < n; i += 3) hit[6][i] += 1;
#pragma omp parallel for
  for (i = n; i > 0; i -= 4) hit[7][i] += 1;
#pragma omp parallel for
  for (u = 0; u < (unsigned)n; u = u + 2) hit[8][u] += 1;
#pragma omp parallel for
  for (u = (unsigned)n; u > 0u; u--) hit[9][u] += 1;
#pragma omp parallel for schedule(static, 5)
  for (l = -40; l < bound(n) - 40; l++) hit[10][l + 40] += 1;
#pragma omp parallel for schedule(dynamic, 2)
  for (unsigned long k = 1; k <= (unsigned long)n; k += 2) hit[11][k] += 1;
#pragma omp parallel for schedule(static, 7)
  for (int k = -n / 2; n / 2 > k; k++) hit[12][k + n / 2] += 1;
#pragma omp parallel for
  for (int k = 5; k < 5; k++) hit[13][k] += 1; /* no iteration */
#pragma omp parallel for
  for (short k = 0; k < 50; k += 1) hit[14][k] += 1;
#pragma omp parallel for
  for (int k = 2; k < N; k = 2 + k) hit[15][k] += 1;
  for (int r = 0; r < 16; r++) {
    long s = 0, w = 0;
    for (int k = 0; k < N + 8; k++) {
      s += hit[r][k];
      w += (long)hit[r][k] * k;
    }
    printf("form %2d: %ld iterations, index sum %ld\n", r, s, w);
  }
  return 0;
}
