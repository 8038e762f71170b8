/* Blocks of every kind the issue names (malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, anonymous mmap, and a malloc large enough that glibc maps it), their
 * pointers in shared (file-scope) arrays, and a shared linked list. The heap programs
 * allocate, grow and free them in different places (sequential part, `single`, `master`,
 * loop bodies) and check them on every node; everything they check is printed, so a node
 * that sees other bytes, or a block another node's allocator handed out again, shows as a
 * diff with gcc -fopenmp.
 *
 * The shared state is defined by the including file, before it includes this header
 * (see heap_seq.c): cape-cc does not preprocess, so under --ckpt=tickpt it
 * registers the file-scope variables it sees in the .c file only. */
#ifndef CAPE_CONTRACT_HEAP_H
#define CAPE_CONTRACT_HEAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "contract.h"

enum { K_MALLOC, K_CALLOC, K_REALLOC, K_MEMALIGN, K_ALIGNED, K_MMAP, K_BIG, NKIND };
static const char *const kind_name[NKIND] = {"malloc", "calloc", "realloc", "posix_memalign",
                                             "aligned_alloc", "mmap", "big malloc"};


static inline void die(const char *what, size_t n) {
  printf("%s of %zu bytes failed\n", what, n);
  exit(2);
}

static inline size_t size_of(int j, int round) {
  switch (j % NKIND) {
    case K_MMAP: return 70000 + (size_t)j * 4099 + (size_t)round * 8192;
    case K_BIG: return (1u << 20) + (size_t)j + (size_t)round * 4096;
    default: return 24 + (size_t)(j * j) * 1500 + (size_t)round * 1000;
  }
}

static unsigned char *get(int k, size_t n) {
  void *p = NULL;
  switch (k) {
    case K_MALLOC: case K_BIG: p = malloc(n); break;
    case K_CALLOC: p = calloc(n, 1); break;
    case K_REALLOC: p = malloc(16); if (p) p = realloc(p, n); break;
    case K_MEMALIGN: if (posix_memalign(&p, 4096, n)) p = NULL; break;
    case K_ALIGNED: p = aligned_alloc(64, (n + 63) / 64 * 64); break;
    case K_MMAP:
      p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) p = NULL;
      break;
  }
  if (!p) die(kind_name[k], n);
  return p;
}

static inline void put(int k, void *p, size_t n) {
  if (k == K_MMAP) munmap(p, n);
  else free(p);
}

/* Block j made anew: allocated, checked for zeros if calloc'd, filled. */
static inline void make(int j, int round, unsigned s) {
  kind[j] = j % NKIND;
  size[j] = size_of(j, round);
  block[j] = get(kind[j], size[j]);
  zero_wrong[j] = kind[j] == K_CALLOC || kind[j] == K_MMAP ? nonzero(block[j], size[j]) : 0;
  seed[j] = s;
  fill(block[j], size[j], s);
}

static inline void drop(int j) {
  put(kind[j], block[j], size[j]);
  block[j] = NULL;
}

/* Block j grown (realloc, or a new mapping for mmap): the old bytes must be kept. */
static inline void grow(int j, size_t n, unsigned s) {
  size_t keep = n < size[j] ? n : size[j];
  unsigned char *p;
  if (kind[j] == K_MMAP) {
    p = get(K_MMAP, n);
    memcpy(p, block[j], keep);
    munmap(block[j], size[j]);
  } else {
    p = realloc(block[j], n);
    if (!p) die("realloc", n);
  }
  kept_wrong[j] = wrong(p, keep, seed[j]);
  block[j] = p;
  size[j] = n;
  seed[j] = s;
  fill(p, n, s);
}

/* What a node sees in block j: the bytes that differ from its pattern, and a checksum. */
static inline unsigned long look(int j) {
  if (!block[j]) return 0;
  return wrong(block[j], size[j], seed[j]) * 1000003ul + sum(block[j], size[j]) % 1000003ul;
}

struct item {
  struct item *next;
  int v;
  char text[];
};

static inline void list_add(int from, int count) {
  for (int v = from; v < from + count; v++) {
    struct item *it = malloc(sizeof *it + (size_t)(v % 97) + 16);
    if (!it) die("malloc", sizeof *it);
    it->v = v;
    snprintf(it->text, (size_t)(v % 97) + 16, "item %d", v);
    it->next = list;
    list = it;
  }
}

/* Frees every m-th item. */
static inline void list_thin(int m) {
  int k = 0;
  for (struct item **p = &list; *p;) {
    if (k++ % m == 0) {
      struct item *dead = *p;
      *p = dead->next;
      free(dead);
    } else {
      p = &(*p)->next;
    }
  }
}

static inline unsigned long list_look(void) {
  unsigned long h = 0, n = 0;
  for (struct item *it = list; it; it = it->next, n++)
    h = h * 31 + (unsigned long)it->v + sum(it->text, strlen(it->text)) % 65521;
  return n * 1000003ul + h % 1000003ul;
}

static inline void list_print(void) {
  int k = 0;
  for (struct item *it = list; it; it = it->next, k++)
    if (k % 25 == 0) printf("  list[%d] = %d \"%s\"\n", k, it->v, it->text);
}

static inline void report(const char *when) {
  printf("%s:\n", when);
  for (int j = 0; j < NB; j++) {
    if (!block[j]) {
      printf("  block %d: freed\n", j);
      continue;
    }
    printf("  block %d: %s, %zu bytes, seed %u, wrong %zu, not zero %zu, not kept %zu, sum %lu\n",
           j, kind_name[kind[j]], size[j], seed[j], wrong(block[j], size[j], seed[j]),
           zero_wrong[j], kept_wrong[j], sum(block[j], size[j]));
  }
  printf("  list: %lu\n", list_look());
  list_print();
}

static inline void drop_all(void) {
  for (int j = 0; j < NB; j++)
    if (block[j]) drop(j);
  while (list) {
    struct item *n = list->next;
    free(list);
    list = n;
  }
}

#endif
