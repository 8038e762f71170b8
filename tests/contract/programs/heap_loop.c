/* Heap growth in loop bodies, on every node at once: each iteration of a `parallel for`
 * allocates a block of its kind (every allocation function, anonymous mmap), grows a block
 * the sequential part allocated, frees another, and builds its own list, all stored in
 * shared arrays. Then the sequential part checks everything (on every node), allocates more
 * (the allocators must agree, or these overlap blocks made in the loop), and a second loop
 * checks, frees and replaces blocks made by another node. A last loop walks everything on
 * every node. */
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

static unsigned char *old[NB];
static void *spare[NB];
static struct item *own[NB];
static unsigned long seen[NB], own_seen[NB], last_seen[8];

static void own_add(int j, int count) {
  for (int v = 0; v < count; v++) {
    struct item *it = malloc(sizeof *it + 24);
    if (!it) die("malloc", sizeof *it);
    it->v = j * 1000 + v;
    snprintf(it->text, 24, "own %d.%d", j % 1000, v % 1000);
    it->next = own[j];
    own[j] = it;
  }
}

static unsigned long own_look(int j) {
  unsigned long h = 0;
  for (struct item *it = own[j]; it; it = it->next) h = h * 31 + (unsigned long)it->v + strlen(it->text);
  return h;
}

int main(void) {
  printf("heap grown in loop bodies\n");
  for (int j = 0; j < NB; j++) {
    old[j] = malloc(100 + (size_t)j * 10);
    fill(old[j], 100 + (size_t)j * 10, 900 + j);
    spare[j] = malloc(3000);
  }

#pragma omp parallel for schedule(static)
  for (int j = 0; j < NB; j++) {
    make(j, 0, 1 + j);
    size_t n = 100 + (size_t)j * 10;
    old[j] = realloc(old[j], n * 50);
    if (!old[j]) die("realloc", n * 50);
    seen[j] = wrong(old[j], n, 900 + j);
    fill(old[j], n * 50, 950 + j);
    free(spare[j]);
    spare[j] = NULL;
    own_add(j, 10 + j);
  }
  for (int j = 0; j < NB; j++)
    printf("loop 1, block %d: old kept wrong %lu, now wrong %zu, own list %lu\n", j, seen[j],
           wrong(old[j], (100 + (size_t)j * 10) * 50, 950 + j), own_look(j));
  report("after loop 1");

  /* Every node allocates the same blocks again in the sequential part. */
  for (int j = 0; j < NB; j++) {
    spare[j] = malloc(2000 + (size_t)j * 100);
    fill(spare[j], 2000 + (size_t)j * 100, 700 + j);
  }

#pragma omp parallel for schedule(static)
  for (int j = 0; j < NB; j++) {
    int b = (j + NB / 2) % NB;
    seen[b] = look(b);
    own_seen[b] = own_look(b) * 31 + wrong(spare[b], 2000 + (size_t)b * 100, 700 + b);
    if (b % 3 == 0) {
      drop(b);
      make(b, 1, 400 + b);
    } else if (b % 3 == 1) {
      grow(b, size[b] + 5000, 500 + b);
    }
    own_add(b, 3);
  }
  for (int j = 0; j < NB; j++) printf("loop 2, block %d: saw %lu, own and spare %lu\n", j, seen[j], own_seen[j]);
  report("after loop 2");

#pragma omp parallel for schedule(static)
  for (int t = 0; t < 8; t++) {
    unsigned long h = 0;
    for (int j = 0; j < NB; j++) h = h * 7 + look(j) + own_look(j) + sum(old[j], (100 + (size_t)j * 10) * 50) % 65521;
    last_seen[t] = h;
  }
  for (int t = 0; t < 8; t++) printf("loop 3, part %d saw %lu\n", t, last_seen[t]);
  drop_all();
  printf("done\n");
  return 0;
}
