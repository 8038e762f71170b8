/* The cape heap's entry points: the C library's allocator interface (docs/monitor.md "The
 * cape heap"; the whole design is in heap_internal.h). The executable's malloc is exported
 * (libc.so defines it too), so ld.so binds libc's own calls to these. malloc and free of
 * small blocks run inline here (heap_internal.h: allocate, free_block and what they call)
 * down to the fast lists; only the bins and coalescing are calls into heap_chunk.c.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"
#include "heap_runtime.h"

/* A call from libgomp's or ld.so's code: their blocks go to the runtimes' heap, out of every
 * checkpoint (heap_runtime.c). */
#define FROM_RUNTIME() __builtin_expect(cape_runtime_heap_caller(__builtin_return_address(0)), 0)

void *malloc(size_t n) {
  if (FROM_RUNTIME()) return cape_runtime_malloc(n);
  return allocate(n, 16, 0);
}

void *calloc(size_t n, size_t size) {
  if (FROM_RUNTIME()) return cape_runtime_calloc(n, size);
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return 0;
  }
  char *clean;
  char *p = allocate(total, 16, &clean);
  if (p && clean > p) memset(p, 0, (size_t)(clean - p) < total ? (size_t)(clean - p) : total);
  return p;
}

void free(void *p) {
  if (!p) return;
  if (!in_heap((uintptr_t)p)) {
    if (cape_runtime_heap_has(p)) cape_runtime_free(p);
    return;
  }
  ready();
  free_block(p, "free");
}

void *realloc(void *p, size_t n) {
  if (p ? cape_runtime_heap_has(p) : FROM_RUNTIME()) return cape_runtime_realloc(p, n);
  if (!p) return malloc(n);
  if (!in_heap((uintptr_t)p)) cape_heap_fail("realloc", p, "not a block of the cape heap (its size is unknown)");
  if (n == 0) { /* glibc's behaviour */
    free(p);
    return 0;
  }
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  ready();
  struct arena *a = arena_of((uintptr_t)p, "realloc");
  struct arena *cur = current();
  size_t nb = request2size(n);
  if (!cape_heap_tls_in_window || a == cape_heap_tls_own) {
    int h = lock(a);
    struct chunk *c = checked(a, p, "realloc");
    int done = 1;
    if (nb <= csize(c)) shrink(a, c, nb);
    else done = cape_heap_grow_in_place(a, c, nb);
    unlock(a, h);
    if (done) return p;
  } else if (nb <= csize(checked(a, p, "realloc"))) {
    return p; /* another arena's block inside a window: left as it is when it fits */
  }
  size_t old = csize(chunk_of(p)) - 8;
  int h = lock(cur);
  /* A large block that moves goes to the top, where it can grow again in place (a block
   * grown step by step would otherwise be copied at every step). */
  void *q = nb >= REALLOC_TOP ? cape_heap_from_top(cur, nb, 0) : alloc(cur, nb, 0);
  unlock(cur, h);
  if (!q) {
    errno = ENOMEM;
    return 0;
  }
  memcpy(q, p, old < n ? old : n);
  free_block(p, "realloc");
  return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return 0;
  }
  return realloc(p, total);
}

/* ---- aligned allocations ---- */

static void *aligned(size_t align, size_t n) {
  if (align <= 16) return malloc(n);
  if (align > ((size_t)1 << 40)) {
    errno = EINVAL;
    return 0;
  }
  if (align & (align - 1)) align = (size_t)1 << (64 - __builtin_clzl(align)); /* as glibc */
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  return allocate(n, align, 0);
}

void *memalign(size_t align, size_t n) {
  if (FROM_RUNTIME()) return cape_runtime_aligned(align, n);
  return aligned(align, n);
}
void *aligned_alloc(size_t align, size_t n) {
  if (FROM_RUNTIME()) return cape_runtime_aligned(align, n);
  return aligned(align, n);
}
void *valloc(size_t n) { return aligned(PAGE, n); }
void *pvalloc(size_t n) {
  size_t r = (n + PAGE - 1) & ~(PAGE - 1);
  if (r < n) {
    errno = ENOMEM;
    return 0;
  }
  return aligned(PAGE, r ? r : PAGE);
}

int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  int saved = errno;
  void *p = FROM_RUNTIME() ? cape_runtime_aligned(align, n) : aligned(align, n);
  int err = p ? 0 : errno;
  errno = saved;
  if (!p) return err;
  *out = p;
  return 0;
}

/* ---- malloc.h's extras ---- */

size_t malloc_usable_size(void *p) {
  if (p && cape_runtime_heap_has(p)) return cape_runtime_usable_size(p);
  if (!p || !in_heap((uintptr_t)p)) return 0;
  ready();
  struct arena *a = arena_of((uintptr_t)p, "malloc_usable_size");
  return csize(checked(a, p, "malloc_usable_size")) - 8;
}

int malloc_trim(size_t pad) {
  ready();
  if (cape_heap_tls_in_window) return 0;
  if (cape_heap_tls_settle_pending) cape_heap_settle_deferred();
  int released = 0;
  for (unsigned i = 0; i <= A0->nodes; i++) {
    struct arena *a = ARENA(i);
    int h = lock(a);
    size_t before = a->st.trims;
    cape_heap_flush_fast(a);
    cape_heap_trim(a, pad);
    released |= a->st.trims != before;
    unlock(a, h);
  }
  return released;
}
