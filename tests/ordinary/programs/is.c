/* NPB-like IS: integer keys ranked by buckets. Each thread counts its keys per bucket in its own
   row (omp_get_thread_num()), the offsets are summed once, each thread scatters its keys with the
   same static schedule, then the buckets are sorted in parallel. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define NK (1 << 17)
#define MAXKEY (1 << 15)
#define NB 128
#define MAXT 64
static int key[NK], sorted[NK];
static int cnt[MAXT][NB], off[MAXT][NB], bstart[NB + 1];
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void) {
  unsigned s = 314159;
  for (int i = 0; i < NK; i++) { s = s * 1103515245u + 12345u; key[i] = ((s >> 10) % MAXKEY + (s >> 20) % MAXKEY) / 2; }
  int nt = 1;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
#pragma omp single
    nt = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int i = 0; i < NK; i++) cnt[t][key[i] / (MAXKEY / NB)]++;
#pragma omp single
    {
      int at = 0;
      for (int b = 0; b < NB; b++) {
        bstart[b] = at;
        for (int u = 0; u < nt; u++) { off[u][b] = at; at += cnt[u][b]; }
      }
      bstart[NB] = at;
    }
#pragma omp for schedule(static)
    for (int i = 0; i < NK; i++) sorted[off[t][key[i] / (MAXKEY / NB)]++] = key[i];
#pragma omp for schedule(dynamic, 4)
    for (int b = 0; b < NB; b++) qsort(sorted + bstart[b], bstart[b + 1] - bstart[b], sizeof(int), cmp);
  }
  long ok = 1, sum = 0;
  for (int i = 0; i < NK; i++) { if (i && sorted[i - 1] > sorted[i]) ok = 0; sum += (long)sorted[i] * (i % 1000); }
  printf("is sorted %s checksum %ld median %d\n", ok ? "yes" : "NO", sum, sorted[NK / 2]);
  return 0;
}
