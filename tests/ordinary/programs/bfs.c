/* Rodinia-like bfs: frontier mask, updating mask, visited, cost; a level per pair of loops. */
#include <stdio.h>
#include <stdlib.h>
#define NV 30000
#define DEG 4
int main(void) {
  int *start = malloc(sizeof(int) * (NV + 1)), *edges = malloc(sizeof(int) * NV * DEG);
  char *mask = calloc(NV, 1), *upd = calloc(NV, 1), *visited = calloc(NV, 1);
  int *cost = malloc(sizeof(int) * NV);
  unsigned s = 31;
  for (int v = 0; v < NV; v++) {
    start[v] = v * DEG;
    edges[v * DEG] = (v + 1) % NV;            /* a ring, so every vertex is reached */
    for (int e = 1; e < DEG; e++) { s = s * 1664525u + 1013904223u; edges[v * DEG + e] = (s >> 8) % NV; }
    cost[v] = -1;
  }
  start[NV] = NV * DEG;
  mask[0] = visited[0] = 1; cost[0] = 0;
  int stop, levels = 0;
  do {
    stop = 0;
#pragma omp parallel for
    for (int v = 0; v < NV; v++)
      if (mask[v]) {
        mask[v] = 0;
        for (int e = start[v]; e < start[v + 1]; e++) {
          int w = edges[e];
          if (!visited[w]) { cost[w] = cost[v] + 1; upd[w] = 1; }
        }
      }
#pragma omp parallel for
    for (int v = 0; v < NV; v++)
      if (upd[v]) { mask[v] = 1; visited[v] = 1; stop = 1; upd[v] = 0; }
    levels++;
  } while (stop);
  long sum = 0; int far = 0;
  for (int v = 0; v < NV; v++) { sum += cost[v]; if (cost[v] > far) far = cost[v]; }
  printf("bfs levels %d deepest %d cost sum %ld cost[777] %d\n", levels, far, sum, cost[777]);
  return 0;
}
