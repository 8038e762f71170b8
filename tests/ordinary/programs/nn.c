/* Rodinia-like nn: the k records nearest a point, distances computed in parallel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define N 50000
#define K 5
struct rec { float lat, lon; int id; };
int main(int argc, char **argv) {
  float qlat = argc > 1 ? atof(argv[1]) : 30.0f, qlon = argc > 2 ? atof(argv[2]) : 90.0f;
  struct rec *r = malloc(sizeof *r * N);
  float *d = malloc(sizeof *d * N);
  unsigned s = 99;
  for (int i = 0; i < N; i++) {
    s = s * 1103515245u + 12345u; r[i].lat = (s >> 8) % 18000 / 100.0f - 90.0f;
    s = s * 1103515245u + 12345u; r[i].lon = (s >> 8) % 36000 / 100.0f - 180.0f;
    r[i].id = i;
  }
#pragma omp parallel for
  for (int i = 0; i < N; i++)
    d[i] = sqrtf((r[i].lat - qlat) * (r[i].lat - qlat) + (r[i].lon - qlon) * (r[i].lon - qlon));
  int best[K];
  for (int k = 0; k < K; k++) {
    int b = -1;
    for (int i = 0; i < N; i++) {
      int taken = 0;
      for (int q = 0; q < k; q++) taken |= best[q] == i;
      if (!taken && (b < 0 || d[i] < d[b])) b = i;
    }
    best[k] = b;
    printf("nn %d: record %d (%.2f, %.2f) distance %.6g\n", k, r[b].id, r[b].lat, r[b].lon, d[b]);
  }
  return 0;
}
