/* The runtimes' heap (heap_runtime.c): blocks that libgomp and ld.so allocate through the
 * program's malloc, kept in untracked memory. Hidden, as heap.h. */
#ifndef CAPE_HEAP_RUNTIME_H
#define CAPE_HEAP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#pragma GCC visibility push(hidden)

/* Finds libgomp's and ld.so's code (before main, from libcape's constructor). */
void cape_runtime_heap_init(void);
/* 1 when `ret` (a caller's return address) lies in libgomp's or ld.so's code. */
int cape_runtime_heap_caller(const void *ret);
static inline int cape_runtime_heap_has(const void *p) {
  return (uintptr_t)p - CAPE_RUNTIME_HEAP_BASE < CAPE_RUNTIME_HEAP_SPAN;
}

void *cape_runtime_malloc(size_t n);
void *cape_runtime_calloc(size_t n, size_t size);
void *cape_runtime_aligned(size_t align, size_t n);
void *cape_runtime_realloc(void *p, size_t n);
void cape_runtime_free(void *p);
size_t cape_runtime_usable_size(void *p);

#pragma GCC visibility pop

#endif
