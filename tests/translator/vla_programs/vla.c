/* Variable-length arrays inside parallel constructs (session 14): a region's per-thread
 * scratch declared at the top of its block (a typedef'd one too), kept across the barriers of its worksharing
 * constructs and an explicit barrier; a 2-D one and a pointer to one; a VLA in a `parallel
 * for` body and in a `for` chunk of a region. -DSET=T: omp_set_num_threads(T) (the region's
 * team shrinks: the nodes outside it still run the declarations); -DNT=T: num_threads(T). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef NT
#define TEAM num_threads(NT)
#else
#define TEAM
#endif

double out[64], out2[64];
int hits[64];

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 16;
#ifdef SET
  omp_set_num_threads(SET);
#endif
#pragma omp parallel TEAM
  {
    double scratch[n];
    int m = n / 2, grid[m][3];
    int (*row)[3] = grid;
    typedef double vec[n]; /* a variably modified type name */
    vec acc;
    for (int k = 0; k < n; k++) scratch[k] = k * 0.5, acc[k] = 2 * k;
    for (int k = 0; k < m; k++) row[k][0] = row[k][1] = row[k][2] = k;
#pragma omp for
    for (int i = 0; i < 64; i++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += scratch[k] * i;
      out[i] = s + grid[i % m][2];
      hits[i]++;
    }
    /* after the for's barrier each thread's scratch is its own again */
    for (int k = 0; k < n; k++) scratch[k] += 1;
#pragma omp barrier
#pragma omp for
    for (int i = 0; i < 64; i++) out2[i] = scratch[i % n] + row[i % m][1] + acc[i % n];
  }
  double t = 0, t2 = 0;
  int h = 0;
  for (int i = 0; i < 64; i++) t += out[i], t2 += out2[i], h += hits[i];
  printf("region %.2f %.2f %d\n", t, t2, h);

#pragma omp parallel for
  for (int i = 0; i < 64; i++) {
    double v[n];
    for (int k = 0; k < n; k++) v[k] = i + k;
    out[i] = v[n - 1] + v[i % n];
  }
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < 64; i++) {
      int w[n][2];
      for (int k = 0; k < n; k++) w[k][0] = w[k][1] = k * i;
      out2[i] = w[n - 1][1] + w[i % n][0];
    }
  }
  t = t2 = 0;
  for (int i = 0; i < 64; i++) t += out[i], t2 += out2[i];
  printf("loops %.2f %.2f\n", t, t2);
  return 0;
}
