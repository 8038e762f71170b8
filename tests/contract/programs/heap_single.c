/* Heap growth on one node inside a region: every kind of block is allocated, grown and freed
 * in `single`, its pointer stored in shared arrays; the region's `for` then checks and
 * rewrites the blocks on every node (rotated, so each node reads blocks another node
 * wrote). Between the regions every node allocates more in the sequential part: if the
 * allocator's state differed between nodes, those blocks would overlap ones made in `single`,
 * and the next region's checks would show it. A last region walks everything on every
 * node. */
#include <stddef.h>

/* The blocks' shared state, used by heap.h. */
#define NB 14
static unsigned char *block[NB];
static size_t size[NB];
static unsigned seed[NB];
static int kind[NB];
static size_t zero_wrong[NB];   /* calloc'd or mmap'd bytes that were not zero */
static size_t kept_wrong[NB];   /* bytes a resize did not keep */
static struct item *list;
#include "heap.h"

#define NX 6
static unsigned char *extra[NX];
static unsigned long seen[NB + NX], last_seen[8];

static unsigned long look_extra(int x) {
  size_t n = 1000 + (size_t)x * 30000;
  return wrong(extra[x], n, 500 + x) * 1000003ul + sum(extra[x], n) % 1000003ul;
}

int main(void) {
  printf("heap grown in single\n");
#pragma omp parallel
  {
#pragma omp single
    {
      void *tmp = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      for (int j = 0; j < NB; j++) make(j, 0, 1 + j);
      munmap(tmp, 1 << 20);
      list_add(0, 300);
    }
#pragma omp for schedule(static)
    for (int j = 0; j < NB; j++) {
      int b = (j + 3) % NB;
      seen[b] = look(b);
      seed[b] = 100 + b;
      fill(block[b], size[b], seed[b]);
    }
  }
  for (int j = 0; j < NB; j++) printf("region 1 saw block %d: %lu\n", j, seen[j]);
  report("after region 1");

  for (int x = 0; x < NX; x++) {
    extra[x] = malloc(1000 + (size_t)x * 30000);
    if (!extra[x]) die("malloc", 1000);
    fill(extra[x], 1000 + (size_t)x * 30000, 500 + x);
  }

#pragma omp parallel
  {
#pragma omp single
    {
      for (int j = 1; j < NB; j += 2) grow(j, size[j] * 2 + 100, 200 + j);
      drop(4);
      make(4, 1, 204);
      drop(NB - 2);
      list_thin(3);
      list_add(1000, 120);
    }
#pragma omp for schedule(static)
    for (int j = 0; j < NB + NX; j++) {
      int b = (j + 5) % (NB + NX);
      if (b < NB) {
        seen[b] = look(b);
        if (block[b]) {
          seed[b] = 300 + b;
          fill(block[b], size[b], seed[b]);
        }
      } else {
        seen[b] = look_extra(b - NB);
      }
    }
  }
  for (int j = 0; j < NB + NX; j++) printf("region 2 saw %s %d: %lu\n", j < NB ? "block" : "extra", j, seen[j]);
  report("after region 2");

#pragma omp parallel for schedule(static)
  for (int t = 0; t < 8; t++) {
    unsigned long h = list_look();
    for (int j = 0; j < NB; j++) h = h * 7 + look(j);
    for (int x = 0; x < NX; x++) h = h * 7 + look_extra(x);
    last_seen[t] = h;
  }
  for (int t = 0; t < 8; t++) printf("region 3, part %d saw %lu\n", t, last_seen[t]);
  drop_all();
  for (int x = 0; x < NX; x++) free(extra[x]);
  printf("done\n");
  return 0;
}
