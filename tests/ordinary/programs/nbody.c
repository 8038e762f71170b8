/* N-body steps: forces in one parallel loop, positions in another; the energy at the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define NB 300
#define STEPS 6
typedef struct { double x, y, z, vx, vy, vz, m; } body;
int main(void) {
  body *b = malloc(sizeof(body) * NB);
  double (*acc)[3] = malloc(sizeof(double[NB][3]));
  unsigned s = 17;
  for (int i = 0; i < NB; i++) {
    s = s * 1103515245u + 12345u; b[i].x = (s >> 16) % 1000 / 100.0;
    s = s * 1103515245u + 12345u; b[i].y = (s >> 16) % 1000 / 100.0;
    s = s * 1103515245u + 12345u; b[i].z = (s >> 16) % 1000 / 100.0;
    b[i].vx = b[i].vy = b[i].vz = 0; b[i].m = 1.0 + i % 3;
  }
  const double dt = 0.001, eps = 0.01;
  for (int st = 0; st < STEPS; st++) {
#pragma omp parallel for
    for (int i = 0; i < NB; i++) {
      double ax = 0, ay = 0, az = 0;
      for (int j = 0; j < NB; j++) {
        double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
        double r2 = dx * dx + dy * dy + dz * dz + eps, inv = b[j].m / (r2 * sqrt(r2));
        ax += dx * inv; ay += dy * inv; az += dz * inv;
      }
      acc[i][0] = ax; acc[i][1] = ay; acc[i][2] = az;
    }
#pragma omp parallel for
    for (int i = 0; i < NB; i++) {
      b[i].vx += dt * acc[i][0]; b[i].vy += dt * acc[i][1]; b[i].vz += dt * acc[i][2];
      b[i].x += dt * b[i].vx; b[i].y += dt * b[i].vy; b[i].z += dt * b[i].vz;
    }
  }
  double ke = 0, cx = 0;
  for (int i = 0; i < NB; i++) { ke += 0.5 * b[i].m * (b[i].vx * b[i].vx + b[i].vy * b[i].vy + b[i].vz * b[i].vz); cx += b[i].m * b[i].x; }
  printf("nbody kinetic %.10g centre x %.10g body 5 at %.8g %.8g %.8g\n", ke, cx, b[5].x, b[5].y, b[5].z);
  return 0;
}
