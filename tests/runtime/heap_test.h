/* What the cape heap's native tests share (heap_test.c has main and these helpers; the
 * cases are in heap_*_test.c, one topic a file). */
#ifndef CAPE_HEAP_TEST_H
#define CAPE_HEAP_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "heap.h"
#include "protocol.h"

extern int failures;
#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
      if (++failures > 20) exit(1);                                            \
    }                                                                          \
  } while (0)
#define REQUIRE(c)                                                             \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #c);        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

uint64_t rnd(void);
/* Sizes from 16 B to 8 MiB, small ones far more often (the least of three exponents). */
size_t random_size(void);

/* fill(): every 8-byte word of a block is tag ^ its index, so a moved or overwritten word
 * is seen (heap_test.c); holds() checks that pattern, zeros() that every byte is 0. */
void fill(void *p, size_t n, uint64_t tag);
int holds(const void *p, size_t n, uint64_t tag);
int zeros(const void *p, size_t n);

/* Sizes and pointers gcc must not see through (it warns about impossible requests). */
size_t opaque(size_t n);
void *opaque_ptr(void *p);

/* Arena `arena`'s stats; the arena must be set up. */
struct cape_heap_stats stats(int arena);

/* The cases, one process each (heap_test CASE). */
void test_basic(void);    /* heap_alloc_test.c */
void test_aligned(void);
void test_libc(void);
void test_trim(void);
void test_window(void);   /* heap_window_test.c */
void test_mmap(void);     /* heap_mmap_test.c */
void test_stress(void);   /* heap_stress_test.c */
void test_threads(void);
void test_nodes(void);    /* heap_nodes_test.c */
void test_failures(void); /* heap_failure_test.c */

#endif /* CAPE_HEAP_TEST_H */
