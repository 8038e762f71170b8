/* The cape heap's mmap, munmap and mremap (docs/monitor.md "The cape heap"; the whole design
 * is in heap_internal.h): anonymous private mappings the kernel would place anywhere are
 * served from the heap, so they are tracked and identical on every node like any block.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#include "heap_internal.h"

/* Private anonymous read-write mappings the kernel would place anywhere: the heap can
 * place them instead, page aligned and zeroed. Everything else is the kernel's. */
static int servable(void *addr, size_t len, int prot, int flags) {
  const int refused = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN | MAP_HUGETLB | MAP_STACK |
                      MAP_32BIT | MAP_NORESERVE;
  return !addr && len && prot == (PROT_READ | PROT_WRITE) && (flags & MAP_ANONYMOUS) &&
         (flags & MAP_TYPE) == MAP_PRIVATE && !(flags & refused);
}

static inline size_t page_up(size_t n) { return (n + PAGE - 1) & ~(PAGE - 1); }

/* A block from mmap() ends with a cookie in its last word (the next chunk's prev_size,
 * beyond the pages the program was given), so a page of the program's own data that
 * happens to look like a chunk header is not taken for one. */
#define MAP_COOKIE 0x6d6d61702d636170ULL
static inline void set_cookie(struct chunk *c) {
  at(c, csize(c))->prev_size = (uintptr_t)c ^ csize(c) ^ MAP_COOKIE;
}

static void *kernel_result(long r) {
  if (r < 0 && r > -4096) {
    errno = (int)-r;
    return MAP_FAILED;
  }
  return (void *)r;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (!servable(addr, len, prot, flags) || len >= MAX_REQUEST)
    return kernel_result(sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off));
  size_t n = page_up(len);
  char *clean;
  char *p = allocate(n, PAGE, &clean);
  if (!p) return MAP_FAILED; /* errno = ENOMEM, as the kernel says */
  chunk_of(p)->head |= MAPPED;
  set_cookie(chunk_of(p));
  if (clean > p) memset(p, 0, (size_t)(clean - p) < n ? (size_t)(clean - p) : n);
  return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

/* The block from mmap() that starts at p, or 0. */
static struct chunk *mapped_block(struct arena *a, void *p) {
  struct chunk *c = chunk_of(p);
  if (((uintptr_t)p & (PAGE - 1)) || (char *)c < (char *)a + HDR_SIZE || c >= a->top) return 0;
  size_t s = csize(c);
  if ((c->head & (MAPPED | CINUSE)) != (MAPPED | CINUSE) || s < MINCHUNK || (char *)c + s > (char *)a->top ||
      !(at(c, s)->head & PINUSE) || at(c, s)->prev_size != ((uintptr_t)c ^ s ^ MAP_COOKIE))
    return 0;
  return c;
}

/* The whole pages of a block from mmap(): the length it was mapped with, rounded up. */
static inline size_t mapped_len(struct chunk *c) { return (csize(c) - 8) & ~(PAGE - 1); }

/* The arenas set up so far span [CAPE_HEAP_BASE, live_end()): arena 0, then the node
 * arenas in order. The rest of the cape heap's range is free for the program's own
 * MAP_FIXED mappings, which munmap and mremap leave to the kernel. */
static inline uintptr_t live_end(void) { return CAPE_HEAP_NODE_BASE + (uintptr_t)A0->nodes * CAPE_HEAP_NODE_SPAN; }

/* The arena whose committed part holds u (below live_end()), or 0: munmap and mremap of
 * reserved or unmapped addresses fail with EINVAL rather than abort. */
static struct arena *committed_arena(uintptr_t u) {
  unsigned i = u >= CAPE_HEAP_NODE_BASE ? 1 + (unsigned)((u - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN) : 0;
  struct arena *a = ARENA(i);
  return u < (uintptr_t)a->committed_end ? a : 0;
}

/* munmap of a whole block from mmap() frees it (deferred in a window when it is another
 * arena's). Any other page-aligned range inside an arena's committed part (part of a block,
 * a malloc'd block) is left as it is and munmap returns 0: the pages stay usable, and a
 * block whose head or tail was unmapped is never freed. A range reaching into the arenas
 * from outside, or in their reserved part, is refused (EINVAL). Everything else is the
 * kernel's. */
int munmap(void *addr, size_t len) {
  uintptr_t u = (uintptr_t)addr;
  ready();
  uintptr_t end = live_end();
  if (u >= end || u + len <= CAPE_HEAP_BASE || u + len < u) {
    long r = sys3(SYS_munmap, addr, len, 0);
    if (r < 0) {
      errno = (int)-r;
      return -1;
    }
    return 0;
  }
  struct arena *a = u < CAPE_HEAP_BASE ? 0 : committed_arena(u);
  if (!a || (u & (PAGE - 1)) || !len) {
    errno = EINVAL;
    return -1;
  }
  int h = lock(a);
  struct chunk *c = mapped_block(a, addr);
  unlock(a, h);
  if (c && page_up(len) >= mapped_len(c)) free_block(addr, "munmap");
  return 0;
}

/* mremap of a block from mmap(): grown in place when the next chunk is free, else moved
 * with MREMAP_MAYMOVE (new pages zeroed, as the kernel's); shrunk in place. MREMAP_FIXED and
 * MREMAP_DONTUNMAP are refused (EINVAL) for heap blocks. Other mappings: the kernel. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
  void *new_addr = 0;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_addr = va_arg(ap, void *);
    va_end(ap);
  }
  ready();
  if ((uintptr_t)old < CAPE_HEAP_BASE || (uintptr_t)old >= live_end())
    return kernel_result(sys6(SYS_mremap, (long)old, (long)old_len, (long)new_len, flags, (long)new_addr, 0));
  struct arena *a = committed_arena((uintptr_t)old);
  if (!a) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  int h = lock(a);
  struct chunk *c = mapped_block(a, old);
  unlock(a, h);
  if (!c || old != mem(c) || !new_len || (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP))) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  size_t have = mapped_len(c), want = page_up(new_len);
  size_t nb = request2size(want);
  if (want <= have) {
    if (!cape_heap_tls_in_window || a == cape_heap_tls_own) {
      h = lock(a);
      shrink(a, c, nb);
      set_cookie(c);
      unlock(a, h);
    }
    return old;
  }
  if (!cape_heap_tls_in_window || a == cape_heap_tls_own) {
    h = lock(a);
    char *fresh = a->fresh;
    int done = cape_heap_grow_in_place(a, c, nb);
    if (done) set_cookie(c);
    unlock(a, h);
    if (done) { /* the new pages read as zeros, as the kernel's would */
      char *z = (char *)old + have, *e = (char *)old + want, *clean = fresh > z ? fresh : z;
      memset(z, 0, (size_t)((clean < e ? clean : e) - z));
      return old;
    }
  }
  if (!(flags & MREMAP_MAYMOVE)) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void *q = mmap(0, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) return q;
  memcpy(q, old, have);
  free_block(old, "mremap");
  return q;
}
