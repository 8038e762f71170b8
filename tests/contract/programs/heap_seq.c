/* Heap growth in the sequential part: every kind of block is allocated, grown and freed
 * before and between regions, identically on every node; regions read and rewrite the
 * blocks through the pointers in shared arrays, every node taking its share (rotated, so each
 * node reads blocks another node rewrote), and the sequential part checks them after each
 * region. */
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

static unsigned long seen[NB], list_seen[8];

int main(void) {
  printf("heap grown in the sequential part\n");
  void *hole = malloc(5000);           /* a hole in the heap, and mappings come and go */
  void *tmp = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (int j = 0; j < NB; j++) make(j, 0, 1 + j);
  free(hole);
  munmap(tmp, 1 << 20);
  list_add(0, 300);
  report("allocated");

#pragma omp parallel for schedule(static)
  for (int j = 0; j < NB; j++) {
    seen[j] = look(j);
    seed[j] = 100 + j;
    fill(block[j], size[j], seed[j]);
  }
  for (int j = 0; j < NB; j++) printf("region 1 saw block %d: %lu\n", j, seen[j]);
  report("after region 1");

  /* Between the regions: grow the odd blocks, replace two, change the list. */
  for (int j = 1; j < NB; j += 2) grow(j, size[j] * 2 + 100, 200 + j);
  drop(4);
  make(4, 1, 204);
  drop(NB - 2);
  list_thin(3);
  list_add(1000, 120);
  report("changed between the regions");

#pragma omp parallel for schedule(static)
  for (int j = 0; j < NB; j++) {
    int b = (j + NB / 2) % NB;
    seen[b] = look(b);
    if (block[b]) {
      seed[b] = 300 + b;
      fill(block[b], size[b], seed[b]);
    }
  }
  for (int j = 0; j < NB; j++) printf("region 2 saw block %d: %lu\n", j, seen[j]);
  report("after region 2");

  /* Every node walks the whole list and looks at every block. */
#pragma omp parallel for schedule(static)
  for (int t = 0; t < 8; t++) {
    unsigned long h = list_look();
    for (int j = 0; j < NB; j++) h = h * 7 + look(j);
    list_seen[t] = h;
  }
  for (int t = 0; t < 8; t++) printf("region 3, part %d saw %lu\n", t, list_seen[t]);
  drop_all();
  printf("done\n");
  return 0;
}
