/* The heap stress of issue 10: 200 regions, each allocating, reallocating and freeing blocks
 * of sizes from 16 B to 8 MiB in `single`, `master` and loop bodies on every node, linking
 * them into shared lists, which the sequential part checks (and trims) after each region.
 * Sizes come from a hash of (region, place, k), so every thread and node draws the same.
 * The output must equal gcc -fopenmp's with as many threads as nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGIONS 200
#define SLOTS 64

struct block {
  struct block *next;
  size_t n;       /* bytes after the header */
  unsigned long tag;
};

static unsigned long hash(unsigned long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdUL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53UL;
  return x ^ (x >> 33);
}

/* 16 B .. 8 MiB, small sizes far more often. */
static size_t size_of(unsigned long h) {
  unsigned e = (unsigned)(h % 20), f = (unsigned)((h >> 8) % 20), g = (unsigned)((h >> 16) % 20);
  if (f < e) e = f;
  if (g < e) e = g;
  size_t s = ((size_t)16 << e) + (h >> 24) % ((size_t)16 << e);
  return s > (8u << 20) ? (8u << 20) : s;
}

static struct block *make(unsigned long tag, size_t n) {
  struct block *b = malloc(sizeof *b + n);
  b->next = NULL;
  b->n = n;
  b->tag = tag;
  memset(b + 1, (int)(tag & 0xff), n);
  return b;
}

static long check(struct block *b) {
  const unsigned char *p = (const unsigned char *)(b + 1);
  if (b->n && (p[0] != (b->tag & 0xff) || p[b->n - 1] != (b->tag & 0xff) || p[b->n / 2] != (b->tag & 0xff)))
    return -1000000;
  return (long)(b->tag % 1000) + (long)b->n;
}

int main(void) {
  struct block *single_list = NULL, *master_list = NULL;
  struct block *slot[SLOTS] = {0};
  long total = 0;
  for (int r = 0; r < REGIONS; r++) {
#pragma omp parallel
    {
#pragma omp single
      {
        for (int k = 0; k < 3; k++) {
          unsigned long h = hash((unsigned long)r * 1000 + (unsigned long)k);
          struct block *b = make(h, size_of(h) / 4);
          b->next = single_list;
          single_list = b;
        }
        if (single_list && single_list->next) { /* grow one, drop one */
          struct block *g = single_list->next;
          size_t n = g->n + size_of(hash((unsigned long)r + 7)) / 8;
          g = realloc(g, sizeof *g + n);
          memset((unsigned char *)(g + 1) + g->n, (int)(g->tag & 0xff), n - g->n);
          g->n = n;
          single_list->next = g;
          struct block *dead = g->next;
          if (dead) {
            g->next = dead->next;
            free(dead);
          }
        }
      }
#pragma omp master
      {
        unsigned long h = hash((unsigned long)r * 7919 + 3);
        struct block *b = make(h, size_of(h) % 4096);
        b->next = master_list;
        master_list = b;
      }
#pragma omp for schedule(static)
      for (int i = 0; i < SLOTS; i++) {
        unsigned long h = hash((unsigned long)r * 104729 + (unsigned long)i);
        if (slot[i] && (h & 3) == 0) { /* maybe another node's block, or the sequential part's */
          free(slot[i]);
          slot[i] = NULL;
        }
        if (!slot[i]) {
          slot[i] = make(h, (h >> 40) % 64 == 0 ? size_of(h) : size_of(h) % 2048);
        } else if ((h & 3) == 1) {
          size_t n = slot[i]->n + (h >> 20) % 512;
          struct block *g = realloc(slot[i], sizeof *g + n);
          memset((unsigned char *)(g + 1) + g->n, (int)(g->tag & 0xff), n - g->n);
          g->n = n;
          slot[i] = g;
        }
      }
    }
    long s = 0;
    int n = 0;
    for (struct block *b = single_list; b; b = b->next, n++) s += check(b);
    for (struct block *b = master_list; b; b = b->next) s += check(b);
    for (int i = 0; i < SLOTS; i++)
      if (slot[i]) s += check(slot[i]);
    total += s;
    if (r % 20 == 19) printf("region %d: %ld (%d in the single list)\n", r, s, n);
    if (n > 40) { /* the sequential part frees too: blocks of any arena */
      struct block *b = single_list;
      for (int k = 0; k < 20; k++) b = b->next;
      while (b->next) {
        struct block *d = b->next;
        b->next = d->next;
        free(d);
      }
    }
  }
  for (int i = 0; i < SLOTS; i++) free(slot[i]);
  while (single_list) {
    struct block *d = single_list;
    single_list = d->next;
    free(d);
  }
  while (master_list) {
    struct block *d = master_list;
    master_list = d->next;
    free(d);
  }
  printf("total %ld\n", total);
  return 0;
}
