/* Big inputs the regions only read (issue 14: under uffd the determinism digest at a
 * region's begin hashes the tracker's copies, brought up to date first, instead of reading
 * the program): an 8 MiB matrix on the heap and a 2 MiB static table, read by every region,
 * while the sequential part between regions rewrites parts of them (a row, scattered words,
 * a run of pages zeroed, a part of the table) and one region writes a part of the matrix
 * itself. A copy not brought up to date would lose those writes or stop the job with a
 * determinism error; every node must print what gcc -fopenmp prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024
#define TAB (256 * 1024)
#define STEPS 8
static double table[TAB];

int main(void) {
  double *m = malloc(sizeof(double) * N * N), *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
  if (!m || !x || !y) return 1;
  for (int i = 0; i < N; i++) {
    x[i] = 1.0;
    for (int j = 0; j < N; j++) m[(long)i * N + j] = (double)((i * 7 + j * 3) % 17) * 0.25 + (i == j);
  }
  for (int k = 0; k < TAB; k++) table[k] = k % 29;
  double check = 0;
  for (int t = 0; t < STEPS; t++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) {
      double s = table[(i * 37 + t * 11) % TAB];
      for (int j = 0; j < N; j++) s += m[(long)i * N + j] * x[j];
      y[i] = s;
    }
    double norm = 0;
    for (int i = 0; i < N; i++) norm += y[i] * y[i];
    for (int i = 0; i < N; i++) x[i] = y[i] / (norm > 0 ? norm : 1) * N;
    check += norm;
    switch (t % 4) {
      case 0:  /* one row */
        for (int j = 0; j < N; j++) m[(long)((t * 97) % N) * N + j] = j * 0.5 + t;
        break;
      case 1:  /* scattered words, one per few pages */
        for (long k = 0; k < 700; k++) m[(k * 4099 + t) % ((long)N * N)] += 1.0 + k % 3;
        break;
      case 2:  /* a run of 64 pages zeroed */
        memset(m + (long)(t * 131 % (N / 2)) * N, 0, 64 * 4096);
        break;
      case 3:  /* part of the table */
        for (int k = t * 1000; k < t * 1000 + 3000; k++) table[k] = -k % 13;
        break;
    }
    if (t == 5) {
      /* A region writes part of the input: the diagonal. */
#pragma omp parallel for
      for (int i = 0; i < N; i++) m[(long)i * N + i] += 2.0;
    }
  }
  double sm = 0, st = 0;
  for (long k = 0; k < (long)N * N; k++) sm += m[k] * (double)(k % 5);
  for (int k = 0; k < TAB; k++) st += table[k] * (double)(k % 7);
  printf("big_input check %.9e m %.6f table %.6f x0 %.9e xlast %.9e\n", check, sm, st, x[0], x[N - 1]);
  free(m);
  free(x);
  free(y);
  return 0;
}
