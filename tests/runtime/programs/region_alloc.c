/* Small allocations inside parallel regions, on every node: each iteration of a parallel
 * for allocates its own block and stores the pointer in a shared array; a second region
 * frees the blocks of the first (another node's, or the sequential part's) and allocates
 * again; the sequential part reads every block, reallocates some, frees all. The
 * output must equal gcc -fopenmp's whatever the node count (cape run -n N, tests/runtime).
 * Small enough that each node's allocations fit in its arena's first commit (16 KiB), so
 * it runs before the monitor replays arena growth on the other nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 96

struct cell {
  long value;
  char name[24];
};

int main(void) {
  struct cell *cells[N];
  char *seq[N];
  for (int i = 0; i < N; i++) { /* sequential blocks, freed inside the next region */
    seq[i] = malloc(16 + (size_t)i);
    snprintf(seq[i], 16, "s%d", i);
  }
  long total = 0;
  for (int round = 0; round < 3; round++) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
      struct cell *c = malloc(sizeof *c);
      c->value = (long)i * i + round;
      snprintf(c->name, sizeof c->name, "cell %d.%d", round, i);
      cells[i] = c;
      free(seq[i]); /* a block of the sequential part: deferred until after the region */
      seq[i] = calloc(1, 8 + (size_t)(i % 5));
    }
    for (int i = 0; i < N; i++) {
      total += cells[i]->value + (long)strlen(cells[i]->name) + seq[i][0];
      if (i % 7 == 0) {
        struct cell *r = realloc(cells[i], 200);
        total += r->value;
        cells[i] = r;
      }
    }
#pragma omp parallel for schedule(static, 5)
    for (int i = 0; i < N; i++) {
      cells[i]->value *= 2;
      if (i % 3 == 0) {
        free(cells[i]); /* allocated in the previous region, maybe by another node */
        cells[i] = NULL;
      }
    }
    for (int i = 0; i < N; i++) {
      if (cells[i]) total += cells[i]->value;
      free(cells[i]);
    }
    printf("round %d total %ld\n", round, total);
  }
  for (int i = 0; i < N; i++) free(seq[i]);
  char *s = malloc(64);
  snprintf(s, 64, "done %ld", total);
  puts(s);
  free(s);
  return 0;
}
