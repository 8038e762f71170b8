/* The cape heap (runtime/src/heap.c) natively, without a monitor: this program is linked
 * with libcape's heap, so its malloc, libc's own allocations and its anonymous mmaps are
 * the cape heap's. Windows are entered with the heap's hidden hooks (cape_heap_settle /
 * enter / leave), as cape_start() and cape_stop() do after their traps; the traps themselves
 * are never run (libcape refuses to run them without a monitor).
 *
 *   heap_test CASE      (basic, aligned, libc, window, mmap, stress, threads, nodes, trim,
 *                        failures); exit 0 when every check holds
 *
 * `nodes` forks one process per node and exchanges what each changed in the heap the way
 * the monitor does (word diffs of the tracked memory, mapping growth replayed by mprotect),
 * so it checks the heap's contract without the monitor: nodes allocating at once never
 * write the same word, and after the exchange the heap is whole and every block valid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap.h"
#include "protocol.h"

static int failures;
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

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

/* Sizes from 16 B to 8 MiB, small ones far more often (the least of three exponents). */
static size_t random_size(void) {
  unsigned e = (unsigned)(rnd() % 20), f = (unsigned)(rnd() % 20), g = (unsigned)(rnd() % 20);
  if (f < e) e = f;
  if (g < e) e = g;
  size_t s = ((size_t)16 << e) + rnd() % ((size_t)16 << e);
  return s > (8u << 20) ? (8u << 20) : s;
}

/* A block's contents: every 8-byte word is tag ^ its index, so a moved or overwritten word
 * is seen; a tail shorter than a word holds the first bytes of its word (so any prefix of a
 * filled block holds the pattern of that length). */
static inline unsigned char tail_byte(uint64_t tag, size_t i) { return (unsigned char)((tag ^ (i / 8)) >> (8 * (i % 8))); }
static void fill(void *p, size_t n, uint64_t tag) {
  uint64_t *w = p;
  size_t k;
  for (k = 0; k < n / 8; k++) w[k] = tag ^ k;
  for (size_t i = k * 8; i < n; i++) ((unsigned char *)p)[i] = tail_byte(tag, i);
}
static int holds(const void *p, size_t n, uint64_t tag) {
  const uint64_t *w = p;
  size_t k;
  for (k = 0; k < n / 8; k++)
    if (w[k] != (tag ^ k)) return 0;
  for (size_t i = k * 8; i < n; i++)
    if (((const unsigned char *)p)[i] != tail_byte(tag, i)) return 0;
  return 1;
}
static int zeros(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

/* Sizes and pointers gcc must not see through (it warns about impossible requests). */
static size_t opaque(size_t n) {
  volatile size_t v = n;
  return v;
}
static void *opaque_ptr(void *p) {
  void *volatile v = p;
  return v;
}

static struct cape_heap_stats stats(int arena) {
  struct cape_heap_stats s;
  REQUIRE(cape_heap_stats(arena, &s) == 0);
  return s;
}

/* ---- basic ---- */

static void test_basic(void) {
  /* Every size class boundary, written whole and read back. */
  void *blocks[300];
  size_t sizes[300];
  int n = 0;
  for (size_t s = 0; s < 2100; s += 7) {
    sizes[n] = s;
    blocks[n] = malloc(s);
    REQUIRE(blocks[n]);
    CHECK(((uintptr_t)blocks[n] & 15) == 0);
    CHECK(cape_heap_arena_of(blocks[n]) == 0);
    CHECK(malloc_usable_size(blocks[n]) >= s);
    fill(blocks[n], s, (uint64_t)n * 977);
    n++;
  }
  for (int i = 0; i < n; i++) CHECK(holds(blocks[i], sizes[i], (uint64_t)i * 977));
  for (int i = 0; i < n; i += 2) free(blocks[i]);
  for (int i = 1; i < n; i += 2) CHECK(holds(blocks[i], sizes[i], (uint64_t)i * 977));
  for (int i = 1; i < n; i += 2) free(blocks[i]);
  cape_heap_check();

  /* calloc zeroes memory that was written before. */
  unsigned char *dirty = malloc(100000);
  memset(dirty, 0xff, 100000);
  unsigned char *keep = malloc(16); /* so the dirty block is not merged into the top */
  free(dirty);
  unsigned char *z = calloc(1000, 100);
  CHECK(z && zeros(z, 100000));
  unsigned char *z2 = calloc(10, 10);
  CHECK(z2 && zeros(z2, 100));
  free(z);
  free(z2);
  free(keep);
  /* calloc from never-written memory (not memset) reads as zeros too. */
  size_t big = 64u << 20;
  unsigned char *fresh = calloc(1, big);
  CHECK(fresh && zeros(fresh, big));
  free(fresh);

  /* realloc keeps the contents, in place when the next chunk is free or the top. */
  char *r = malloc(100);
  fill(r, 100, 5);
  char *r2 = realloc(r, 5000);
  CHECK(r2 && holds(r2, 100, 5));
  CHECK(r2 == r); /* r was at the top: grown in place */
  fill(r2, 5000, 6);
  char *blocker = malloc(10);
  char *r3 = realloc(r2, 200000);
  CHECK(r3 && r3 != r2 && holds(r3, 5000, 6));
  char *r4 = realloc(r3, 64);
  CHECK(r4 == r3 && holds(r4, 64, 6));
  /* grown into a free neighbour (larger than what the fast lists keep) */
  char *a = malloc(200), *b = malloc(1500), *c = malloc(16);
  fill(a, 200, 9);
  free(b);
  char *a2 = realloc(a, 1650);
  CHECK(a2 == a && holds(a2, 200, 9));
  free(a2);
  free(c);
  free(r4);
  free(blocker);
  CHECK(realloc(0, 10) != 0);
  errno = 0;
  CHECK(reallocarray(0, opaque(SIZE_MAX / 2), 3) == 0 && errno == ENOMEM);
  void *ra = reallocarray(0, 100, 8);
  CHECK(ra && malloc_usable_size(ra) >= 800);
  CHECK(realloc(ra, 0) == 0); /* freed, as glibc does */

  /* Out of space: NULL and ENOMEM, and the heap still works. */
  errno = 0;
  CHECK(malloc(opaque((size_t)1 << 45)) == 0 && errno == ENOMEM); /* more than arena 0's 8 TiB */
  errno = 0;
  CHECK(malloc(opaque(SIZE_MAX)) == 0 && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(opaque(SIZE_MAX / 4), 8) == 0 && errno == ENOMEM);
  void *after = malloc(24);
  CHECK(after != 0);
  free(after);
  free(0);
  CHECK(malloc_usable_size(0) == 0);
  cape_heap_check();
  CHECK(stats(0).in_use == 0 || stats(0).in_use < 4096); /* only what libc keeps */
}

/* ---- aligned ---- */

static void test_aligned(void) {
  for (size_t align = 32; align <= (1u << 20); align *= 2) {
    for (size_t n = 1; n < 300000; n = n * 3 + 5) {
      void *p = 0;
      CHECK(posix_memalign(&p, align, n) == 0);
      CHECK(p && ((uintptr_t)p & (align - 1)) == 0);
      CHECK(malloc_usable_size(p) >= n);
      fill(p, n, align + n);
      void *q = aligned_alloc(align, n);
      void *r = memalign(align, n);
      CHECK(q && ((uintptr_t)q & (align - 1)) == 0);
      CHECK(r && ((uintptr_t)r & (align - 1)) == 0);
      fill(q, n, 1);
      fill(r, n, 2);
      CHECK(holds(p, n, align + n));
      free(q);
      free(p);
      CHECK(holds(r, n, 2));
      free(r);
    }
  }
  void *p = (void *)1;
  CHECK(posix_memalign(&p, 24, 10) == EINVAL && p == (void *)1);
  CHECK(posix_memalign(&p, 4, 10) == EINVAL);
  errno = 0;
  CHECK(posix_memalign(&p, 64, opaque(SIZE_MAX / 2)) == ENOMEM && errno == 0); /* errno left alone */
  void *v = valloc(100), *pv = pvalloc(5000);
  CHECK(v && ((uintptr_t)v & 4095) == 0);
  CHECK(pv && ((uintptr_t)pv & 4095) == 0 && malloc_usable_size(pv) >= 8192);
  void *odd = memalign(48, 10); /* not a power of two: rounded up, as glibc does */
  CHECK(odd && ((uintptr_t)odd & 63) == 0);
  free(v);
  free(pv);
  free(odd);
  cape_heap_check();
}

/* ---- libc's own allocations ---- */

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static void test_libc(void) {
  char *s = strdup("cape");
  CHECK(cape_heap_arena_of(s) == 0);
  char *sn = strndup("cape heap", 4);
  CHECK(cape_heap_arena_of(sn) == 0);
  FILE *f = fopen("/proc/self/maps", "r");
  REQUIRE(f);
  CHECK(cape_heap_arena_of(f) == 0);
  char *line = 0;
  size_t cap = 0;
  CHECK(getline(&line, &cap, f) > 0);
  CHECK(cape_heap_arena_of(line) == 0);
  /* the FILE's buffer, allocated at the first read */
  CHECK(cape_heap_arena_of(f->_IO_buf_base) == 0);
  fclose(f);
  char *buf = 0;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  REQUIRE(m);
  for (int i = 0; i < 1000; i++) fprintf(m, "line %d\n", i);
  fflush(m);
  CHECK(len > 5000 && cape_heap_arena_of(buf) == 0);
  fclose(m);
  char *as = 0;
  CHECK(asprintf(&as, "%d %s", 42, "x") > 0 && cape_heap_arena_of(as) == 0);
  /* qsort takes a buffer from malloc for arrays beyond what it puts on the stack */
  size_t n = 200000;
  long *arr = malloc(n * sizeof *arr);
  for (size_t i = 0; i < n; i++) arr[i] = (long)(rnd() % 1000000);
  struct cape_heap_stats before = stats(0);
  qsort(arr, n, sizeof *arr, cmp_long);
  struct cape_heap_stats after = stats(0);
  CHECK(after.mallocs > before.mallocs && after.frees > before.frees);
  for (size_t i = 1; i < n; i++) CHECK(arr[i - 1] <= arr[i]);
  free(arr);
  free(s);
  free(sn);
  free(line);
  free(buf);
  free(as);
  /* A block glibc's own allocator handed out (not the cape heap's): free() ignores it. */
  extern void *__libc_malloc(size_t);
  void *g = __libc_malloc(100);
  CHECK(g && cape_heap_arena_of(g) == -1);
  free(g);
  cape_heap_check();
}

/* ---- windows ---- */

static void test_window(void) {
  cape_heap_settle(4);
  CHECK(stats(4).base == CAPE_HEAP_NODE_BASE + 3 * CAPE_HEAP_NODE_SPAN);
  CHECK(cape_heap_stats(5, &(struct cape_heap_stats){0}) == -1);
  char *outside = malloc(1000), *outside2 = malloc(50000), *keep = malloc(10);
  fill(outside, 1000, 1);
  fill(outside2, 50000, 2);
  struct cape_heap_stats a0 = stats(0), a3 = stats(3);

  cape_heap_enter(2); /* node 2: arena 3 */
  CHECK(cape_heap_in_window());
  char *in = malloc(100);
  CHECK(cape_heap_arena_of(in) == 3);
  char *in_z = calloc(10, 100);
  CHECK(cape_heap_arena_of(in_z) == 3 && zeros(in_z, 1000));
  void *in_al = aligned_alloc(256, 100);
  CHECK(cape_heap_arena_of(in_al) == 3 && ((uintptr_t)in_al & 255) == 0);
  char *big = malloc(1 << 20); /* more than the node arena's first commit: it grows */
  CHECK(cape_heap_arena_of(big) == 3);
  fill(big, 1 << 20, 3);
  CHECK(stats(3).grows > a3.grows);
  /* own block: freed at once */
  size_t frees3 = stats(3).frees;
  free(in);
  CHECK(stats(3).frees == frees3 + 1);
  /* arena 0's block: deferred, arena 0 untouched */
  free(opaque_ptr(outside));
  CHECK(stats(3).deferred == 1);
  CHECK(stats(0).frees == a0.frees && stats(0).in_use == a0.in_use);
  CHECK(cape_heap_arena_of(outside) == 0); /* still in use until settled */
  /* realloc of arena 0's block: smaller stays, larger moves to the node's arena */
  CHECK(realloc(opaque_ptr(outside2), 100) == outside2);
  char *moved = realloc(opaque_ptr(outside2), 80000);
  CHECK(moved != opaque_ptr(outside2) && cape_heap_arena_of(moved) == 3 && holds(moved, 50000, 2));
  CHECK(stats(3).deferred == 2);
  CHECK(stats(0).in_use == a0.in_use);
  /* realloc of its own block */
  char *grown = realloc(big, 2 << 20);
  CHECK(cape_heap_arena_of(grown) == 3 && holds(grown, 1 << 20, 3));
  /* the node arena's top is never given back inside a window */
  size_t committed = stats(3).committed;
  free(grown);
  free(moved);
  CHECK(stats(3).committed == committed && stats(3).trims == 0);
  CHECK(stats(0).in_use == a0.in_use);
  cape_heap_leave();
  CHECK(!cape_heap_in_window());

  /* The first call after the window settles: every deferred free is done. */
  CHECK(stats(3).deferred == 2);
  void *next = malloc(10);
  CHECK(cape_heap_arena_of(next) == 0);
  CHECK(stats(3).deferred == 0);
  CHECK(stats(0).frees == a0.frees + 2);
  /* node 2's blocks freed outside a window: by their own arena, as every node does */
  size_t in3 = stats(3).in_use;
  free(in_z);
  free(in_al);
  CHECK(stats(3).in_use < in3);
  free(next);
  free(keep);

  /* settle() at cape_start(): deferred frees of another window, before the next one. */
  char *o = malloc(300);
  cape_heap_enter(0);
  free(o);
  CHECK(stats(1).deferred == 1);
  cape_heap_leave();
  cape_heap_settle(4);
  CHECK(stats(1).deferred == 0);
  cape_heap_check();
}

/* ---- mmap ---- */

static void test_mmap(void) {
  int prw = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
  size_t in_use = stats(0).in_use;
  char *m = mmap(0, 100000, prw, anon, -1, 0);
  REQUIRE(m != MAP_FAILED);
  CHECK(cape_heap_arena_of(m) == 0 && ((uintptr_t)m & 4095) == 0);
  CHECK(zeros(m, 100000));
  fill(m, 100000, 7);
  /* a dirty block given back and mapped again reads as zeros */
  char *keep = malloc(10);
  CHECK(munmap(m, 100000) == 0);
  char *m2 = mmap(0, 100000, prw, anon, -1, 0);
  CHECK(m2 != MAP_FAILED && zeros(m2, 100000));
  /* partial munmap: nothing happens, the pages stay usable */
  fill(m2, 100000, 8);
  CHECK(munmap(m2 + 8192, 8192) == 0);
  CHECK(munmap(m2, 4096) == 0);
  CHECK(holds(m2, 100000, 8));
  CHECK(cape_heap_arena_of(m2) == 0);
  /* mremap: grown keeps the contents and zeroes the rest, shrunk in place */
  char *m3 = mremap(m2, 100000, 300000, MREMAP_MAYMOVE);
  REQUIRE(m3 != MAP_FAILED);
  CHECK(holds(m3, 100000, 8) && zeros(m3 + 102400, 300000 - 102400));
  CHECK(mremap(m3, 300000, 10000, 0) == m3);
  CHECK(mremap(m3, 10000, 1 << 20, MREMAP_FIXED | MREMAP_MAYMOVE, (void *)0x7e0000000000) == MAP_FAILED &&
        errno == EINVAL);
  /* without MREMAP_MAYMOVE: grown in place, or ENOMEM when the next chunk is in use */
  fill(m3, 12288, 10);
  char *blocker = mmap(0, 4096, prw, anon, -1, 0);
  errno = 0;
  char *m4 = mremap(m3, 12288, 1 << 20, 0);
  size_t m3_len = 12288;
  if (m4 == MAP_FAILED) {
    CHECK(errno == ENOMEM);
  } else {
    CHECK(m4 == m3 && holds(m3, 12288, 10) && zeros(m3 + 12288, (1 << 20) - 12288));
    m3_len = 1 << 20;
  }
  CHECK(munmap(m3, m3_len) == 0 && cape_heap_arena_of(m3) == -1);
  CHECK(munmap(blocker, 4096) == 0);
  CHECK(munmap(keep, 16) == -1 && errno == EINVAL); /* not page aligned, as the kernel says */
  CHECK(cape_heap_arena_of(keep) == 0);
  char *page_block = memalign(4096, 8192);
  CHECK(munmap(page_block, 8192) == 0 && cape_heap_arena_of(page_block) == 0); /* not from mmap: left alone */
  free(page_block);
  free(keep);
  CHECK(stats(0).in_use == in_use);
  /* What the kernel keeps: shared, fixed, read-only, no-reserve and file mappings. */
  char *sh = mmap(0, 8192, prw, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(sh != MAP_FAILED && cape_heap_arena_of(sh) == -1 && (uintptr_t)sh > CAPE_HEAP_END);
  char *ro = mmap(0, 8192, PROT_READ, anon, -1, 0);
  CHECK(ro != MAP_FAILED && (uintptr_t)ro > CAPE_HEAP_END);
  char *nr = mmap(0, 8192, prw, anon | MAP_NORESERVE, -1, 0);
  CHECK(nr != MAP_FAILED && (uintptr_t)nr > CAPE_HEAP_END);
  char *fx = mmap((void *)0x600000000000, 8192, prw, anon | MAP_FIXED_NOREPLACE, -1, 0);
  CHECK(fx == (void *)0x600000000000);
  /* a fixed mapping where no node arena is set up: the kernel's, unmapped by the kernel */
  char *fx2 = (char *)(CAPE_HEAP_NODE_BASE + 200 * CAPE_HEAP_NODE_SPAN);
  CHECK(mmap(fx2, 8192, prw, anon | MAP_FIXED_NOREPLACE, -1, 0) == fx2);
  fx2[0] = 1;
  CHECK(munmap(fx2, 8192) == 0);
  int fd = open("/proc/self/exe", O_RDONLY);
  char *file = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(file != MAP_FAILED && memcmp(file, "\177ELF", 4) == 0);
  close(fd);
  char *bad = mmap(0, 4096, PROT_READ, MAP_PRIVATE, 12345, 0);
  CHECK(bad == MAP_FAILED && errno == EBADF);
  CHECK(munmap(sh, 8192) == 0 && munmap(ro, 8192) == 0 && munmap(nr, 8192) == 0);
  CHECK(munmap(fx, 8192) == 0 && munmap(file, 4096) == 0);
  errno = 0;
  CHECK(munmap((void *)(CAPE_HEAP_BASE - 4096), 8192) == -1 && errno == EINVAL); /* reaches into the heap */
  errno = 0;
  CHECK(munmap((void *)(CAPE_HEAP_BASE + ((size_t)1 << 40)), 4096) == -1 && errno == EINVAL); /* reserved */
  errno = 0;
  CHECK(mremap((void *)(CAPE_HEAP_BASE + ((size_t)1 << 40)), 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED &&
        errno == EINVAL);
  /* inside a window: from the node's arena; unmapping another arena's block is deferred */
  cape_heap_settle(2);
  char *outside = mmap(0, 20000, prw, anon, -1, 0);
  cape_heap_enter(1);
  char *inside = mmap(0, 20000, prw, anon, -1, 0);
  CHECK(cape_heap_arena_of(inside) == 2 && zeros(inside, 20000));
  CHECK(munmap(outside, 20000) == 0);
  CHECK(stats(2).deferred == 1 && cape_heap_arena_of(outside) == 0);
  CHECK(munmap(inside, 20000) == 0 && cape_heap_arena_of(inside) == -1);
  cape_heap_leave();
  free(malloc(1));
  CHECK(cape_heap_arena_of(outside) == -1);
  cape_heap_check();
}

/* ---- random stress, in and out of windows ---- */

struct slot {
  char *p;
  size_t n;
  uint64_t tag;
  int mapped;
};

static void release_slot(struct slot *s) {
  if (!s->p) return;
  CHECK(holds(s->p, s->n, s->tag));
  if (s->mapped) CHECK(munmap(s->p, s->n) == 0);
  else free(s->p);
  s->p = 0;
}

static void test_stress(void) {
  enum { SLOTS = 400, OPS = 100000 };
  static struct slot slots[SLOTS];
  uint64_t tag = 1;
  int window = -1;
  cape_heap_settle(4);
  for (int op = 0; op < OPS; op++) {
    if (op % 1500 == 0) {
      /* alternate: sequential part, then a window of node (op / 1500) % 4 */
      if (window >= 0) {
        cape_heap_leave();
        window = -1;
      } else {
        window = (op / 1500) % 4;
        cape_heap_enter(window);
      }
    }
    int expect_arena = window < 0 ? 0 : window + 1;
    struct slot *s = &slots[rnd() % SLOTS];
    size_t n = random_size();
    unsigned what = (unsigned)(rnd() % 9);
    if (s->p && what < 4) {
      release_slot(s);
      continue;
    }
    if (s->p && what == 4 && !s->mapped) { /* realloc */
      char *old = s->p;
      int old_arena = cape_heap_arena_of(old);
      size_t old_usable = malloc_usable_size(old);
      char *q = realloc(s->p, n);
      REQUIRE(q);
      size_t keep = n < s->n ? n : s->n;
      if (!holds(q, keep, s->tag))
        fprintf(stderr, "op %d window %d: realloc(%p arena %d usable %zu, %zu -> %zu) = %p arena %d\n", op, window,
                (void *)old, old_arena, old_usable, s->n, n, (void *)q, cape_heap_arena_of(q));
      CHECK(holds(q, keep, s->tag));
      if (q != s->p) CHECK(cape_heap_arena_of(q) == expect_arena);
      s->p = q;
      s->n = n;
      s->tag = ++tag;
      fill(q, n, s->tag);
      continue;
    }
    release_slot(s);
    size_t align = 16;
    s->mapped = 0;
    switch (what) {
      case 0: case 1: case 4: s->p = malloc(n); break;
      case 2: s->p = calloc(1, n); REQUIRE(s->p); CHECK(zeros(s->p, n)); break;
      case 3: align = (size_t)32 << (rnd() % 8); REQUIRE(posix_memalign((void **)&s->p, align, n) == 0); break;
      case 5: align = (size_t)64 << (rnd() % 6); s->p = aligned_alloc(align, n); break;
      case 6: align = (size_t)32 << (rnd() % 10); s->p = memalign(align, n); break;
      default:
        s->p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(s->p != MAP_FAILED);
        CHECK(zeros(s->p, n));
        s->mapped = 1;
        align = 4096;
    }
    REQUIRE(s->p);
    CHECK(((uintptr_t)s->p & (align - 1)) == 0);
    CHECK(cape_heap_arena_of(s->p) == expect_arena);
    CHECK(malloc_usable_size(s->p) >= n);
    s->n = n;
    s->tag = ++tag;
    fill(s->p, n, s->tag);
    if (op % 1000 == 999) cape_heap_check();
  }
  if (window >= 0) cape_heap_leave();
  for (int i = 0; i < SLOTS; i++) release_slot(&slots[i]);
  cape_heap_settle(4);
  cape_heap_check();
  for (int i = 1; i <= 4; i++) {
    CHECK(stats(i).in_use == 0);
    CHECK(stats(i).deferred == 0);
  }
}

/* ---- threads ---- */

#define THREADS 4
static char *_Atomic exchange[64];

static void *thread_main(void *arg) {
  uint64_t seed = (uint64_t)(uintptr_t)arg * 0x2545F4914F6CDD1DULL + 1;
  enum { MINE = 64, OPS = 40000 };
  char *mine[MINE] = {0};
  size_t mine_n[MINE] = {0};
  for (int op = 0; op < OPS; op++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    int k = (int)(seed % MINE);
    size_t n = 16 + (seed >> 20) % ((seed >> 50) % 4 == 0 ? 200000 : 2000);
    if (mine[k]) {
      if (!holds(mine[k], mine_n[k], (uint64_t)(uintptr_t)mine[k])) __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
      if ((seed >> 40) % 3 == 0) {
        /* hand it to whichever thread takes exchange slot e next: freed by another thread */
        int e = (int)((seed >> 30) % 64);
        char *old = __atomic_exchange_n(&exchange[e], mine[k], __ATOMIC_ACQ_REL);
        free(old);
      } else {
        free(mine[k]);
      }
    }
    mine[k] = (seed >> 33) % 2 ? malloc(n) : calloc(1, n);
    if (!mine[k]) {
      __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
      return 0;
    }
    mine_n[k] = n;
    fill(mine[k], n, (uint64_t)(uintptr_t)mine[k]);
  }
  for (int k = 0; k < MINE; k++) free(mine[k]);
  return 0;
}

static void test_threads(void) {
  pthread_t t[THREADS];
  size_t before = stats(0).in_use;
  for (long i = 0; i < THREADS; i++) REQUIRE(pthread_create(&t[i], 0, thread_main, (void *)(i + 1)) == 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  for (int e = 0; e < 64; e++) free(exchange[e]);
  cape_heap_check();
  /* what is left is pthread's own (the threads' TLS vectors) */
  CHECK(stats(0).in_use < before + 64 * 1024);
  CHECK(failures == 0);
}

/* ---- several nodes, exchanging their heap writes as the monitor does ---- */

#define NODES 3
#define NARENAS (NODES + 1)

/* Memory that is not the heap's: raw mmap, so the interposed mmap does not serve it. */
static void *raw_map(size_t n) {
  void *p = (void *)syscall(SYS_mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return p;
}

static int write_all(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return -1;
    p = (const char *)p + w;
    n -= (size_t)w;
  }
  return 0;
}
static int read_all(int fd, void *p, size_t n) {
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return -1;
    p = (char *)p + r;
    n -= (size_t)r;
  }
  return 0;
}

/* What a window starts from: every arena's committed bytes. */
struct snapshot {
  char *copy[NARENAS];
  size_t len[NARENAS];
};

static void take(struct snapshot *s) {
  for (int i = 0; i < NARENAS; i++) {
    size_t c = stats(i).committed;
    if (c > s->len[i]) {
      if (s->copy[i]) munmap(s->copy[i], s->len[i]); /* a kernel mapping (outside the heap) */
      s->copy[i] = raw_map(c);
    }
    s->len[i] = c;
    memcpy(s->copy[i], (char *)stats(i).base, c);
  }
}

/* The changed words of every arena since `s`, to fd: {address, length} then the bytes, an
 * address of 0 at the end; each arena's committed size first. No allocator call in here:
 * this runs after the window, before the exchange, where the heap must not settle. */
static void send_changes(int fd, const struct snapshot *s) {
  for (int i = 0; i < NARENAS; i++) {
    struct cape_heap_stats st;
    cape_heap_stats(i, &st);
    uint64_t c = st.committed;
    write_all(fd, &c, 8);
  }
  for (int i = 0; i < NARENAS; i++) {
    struct cape_heap_stats st;
    cape_heap_stats(i, &st);
    const uint64_t *now = (const uint64_t *)st.base;
    size_t words = st.committed / 8;
    for (size_t w = 0; w < words;) {
      uint64_t was = w < s->len[i] / 8 ? ((const uint64_t *)s->copy[i])[w] : 0;
      if (now[w] == was) {
        w++;
        continue;
      }
      size_t e = w + 1;
      while (e < words && now[e] != (e < s->len[i] / 8 ? ((const uint64_t *)s->copy[i])[e] : 0)) e++;
      uint64_t hdr[2] = {(uint64_t)(uintptr_t)&now[w], (e - w) * 8};
      write_all(fd, hdr, 16);
      write_all(fd, &now[w], (e - w) * 8);
      w = e;
    }
  }
  uint64_t end[2] = {0, 0};
  write_all(fd, end, 16);
}

/* Applies a node's changes: its growth first (mprotect, as the monitor replays it), then the
 * words; a word both changed to different values is a conflict (two nodes wrote it). */
static long apply_changes(int fd, const struct snapshot *s, size_t *committed_now) {
  long conflicts = 0;
  for (int i = 0; i < NARENAS; i++) {
    uint64_t c;
    REQUIRE(read_all(fd, &c, 8) == 0);
    uintptr_t base = (uintptr_t)stats(i).base;
    if (c > committed_now[i]) {
      REQUIRE(mprotect((void *)(base + committed_now[i]), c - committed_now[i], PROT_READ | PROT_WRITE) == 0);
      committed_now[i] = c;
    }
  }
  static uint64_t buf[1 << 17];
  for (;;) {
    uint64_t hdr[2];
    REQUIRE(read_all(fd, hdr, 16) == 0);
    if (!hdr[0]) break;
    uint64_t *dst = (uint64_t *)(uintptr_t)hdr[0];
    for (uint64_t done = 0; done < hdr[1];) {
      size_t n = hdr[1] - done < sizeof buf ? hdr[1] - done : sizeof buf;
      REQUIRE(read_all(fd, buf, n) == 0);
      for (size_t k = 0; k < n / 8; k++) {
        uint64_t *w = dst + (done / 8) + k;
        int arena = (uintptr_t)w < CAPE_HEAP_NODE_BASE ? 0 : 1 + (int)(((uintptr_t)w - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN);
        size_t off = (uintptr_t)w - (uintptr_t)stats(arena).base;
        uint64_t was = off < s->len[arena] ? *(uint64_t *)(s->copy[arena] + off) : 0;
        if (*w != was && *w != buf[k]) conflicts++;
        *w = buf[k];
      }
      done += n;
    }
  }
  return conflicts;
}

/* One block of a node's list: which node made it, in which round, and its size. */
struct item {
  struct item *next;
  int node, round;
  size_t n;
  uint64_t tag;
};

struct shared {
  struct item *list[NODES];    /* each node's list, written only by that node in a window */
  char *victims[NODES * 16];   /* arena 0 blocks that node (i % NODES) frees in a window */
  long made[NODES];            /* items each node has made */
};

static void node_work(struct shared *sh, int rank, int round) {
  uint64_t seed = (uint64_t)(rank + 1) * 7919 + (uint64_t)round * 104729;
  for (int k = 0; k < 40; k++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    size_t n = sizeof(struct item) + (seed % 7 == 0 ? (seed >> 8) % (1 << 20) : (seed >> 8) % 3000);
    struct item *it = (seed >> 5) % 3 ? malloc(n) : calloc(1, n);
    REQUIRE(it);
    it->node = rank;
    it->round = round;
    it->n = n;
    it->tag = seed;
    fill(it + 1, n - sizeof *it, seed);
    it->next = sh->list[rank];
    sh->list[rank] = it;
    sh->made[rank]++;
  }
  /* grow one of its items (its own arena: in place or moved, freed at once) */
  struct item *first = sh->list[rank];
  struct item *g = realloc(first, first->n + 5000);
  REQUIRE(g);
  fill(g + 1, g->n + 5000 - sizeof *g, g->tag ^ 1);
  g->n += 5000;
  g->tag ^= 1;
  sh->list[rank] = g;
  /* free this node's share of the arena-0 victims: deferred */
  for (int v = rank; v < NODES * 16; v += NODES)
    if (sh->victims[v] && (round + v) % 4 == 0) {
      free(sh->victims[v]);
      sh->victims[v] = 0;
    }
  /* drop every other item made two rounds ago (this node's own arena) */
  for (struct item **p = &sh->list[rank]; *p;) {
    if ((*p)->round == round - 2 && ((*p)->tag & 1)) {
      struct item *dead = *p;
      *p = dead->next;
      free(dead);
      sh->made[rank]--;
    } else {
      p = &(*p)->next;
    }
  }
}

static void test_nodes(void) {
  cape_heap_settle(NODES);
  struct shared *sh = calloc(1, sizeof *sh);
  for (int v = 0; v < NODES * 16; v++) {
    sh->victims[v] = malloc(100 + (size_t)v * 37);
    fill(sh->victims[v], 100 + (size_t)v * 37, (uint64_t)v);
  }
  static struct snapshot snap;
  long conflicts = 0;
  for (int round = 0; round < 12; round++) {
    /* cape_start(): settled on every node alike, then the window */
    cape_heap_settle(NODES);
    take(&snap);
    size_t committed[NARENAS];
    for (int i = 0; i < NARENAS; i++) committed[i] = stats(i).committed;
    int fds[NODES];
    pid_t pids[NODES];
    for (int r = 1; r < NODES; r++) {
      int p[2];
      REQUIRE(pipe(p) == 0);
      pids[r] = fork();
      REQUIRE(pids[r] >= 0);
      if (pids[r] == 0) {
        close(p[0]);
        cape_heap_enter(r);
        node_work(sh, r, round);
        cape_heap_leave();
        send_changes(p[1], &snap);
        _exit(0);
      }
      close(p[1]);
      fds[r] = p[0];
    }
    cape_heap_enter(0);
    node_work(sh, 0, round);
    cape_heap_leave();
    for (int r = 1; r < NODES; r++) {
      conflicts += apply_changes(fds[r], &snap, committed);
      close(fds[r]);
      int status;
      REQUIRE(waitpid(pids[r], &status, 0) == pids[r]);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    cape_heap_check();
    /* the sequential part: every list whole, every block intact */
    long seen[NODES] = {0};
    for (int r = 0; r < NODES; r++)
      for (struct item *it = sh->list[r]; it; it = it->next) {
        CHECK(it->node == r && cape_heap_arena_of(it) == r + 1);
        CHECK(holds(it + 1, it->n - sizeof *it, it->tag));
        seen[r]++;
      }
    for (int r = 0; r < NODES; r++) CHECK(seen[r] == sh->made[r]);
    for (int v = 0; v < NODES * 16; v++)
      if (sh->victims[v]) CHECK(holds(sh->victims[v], 100 + (size_t)v * 37, (uint64_t)v));
    /* an allocation in the sequential part settles the deferred frees */
    void *seq = malloc(64);
    for (int i = 1; i < NARENAS; i++) CHECK(stats(i).deferred == 0);
    free(seq);
    cape_heap_check();
  }
  CHECK(conflicts == 0);
  for (int r = 0; r < NODES; r++)
    while (sh->list[r]) {
      struct item *n = sh->list[r]->next;
      free(sh->list[r]);
      sh->list[r] = n;
    }
  for (int i = 1; i < NARENAS; i++) CHECK(stats(i).in_use == 0);
  cape_heap_check();
  if (conflicts) fprintf(stderr, "%ld words written by two nodes\n", conflicts);
}

/* ---- trim ---- */

static void test_trim(void) {
  char *keep = malloc(100);
  size_t c0 = stats(0).committed;
  char *big = malloc(32 << 20);
  CHECK(stats(0).committed >= (32u << 20) && stats(0).committed > c0);
  fill(big, 32 << 20, 3);
  size_t trims = stats(0).trims;
  free(big);
  CHECK(stats(0).trims == trims + 1);
  CHECK(stats(0).committed < c0 + (2u << 20));
  /* given back and committed again: zeros, as calloc assumes */
  char *again = calloc(1, 16 << 20);
  CHECK(again && zeros(again, 16 << 20));
  free(again);
  free(keep);
  cape_heap_check();
}

/* ---- failures: messages that name the cape heap, SIGABRT ---- */

static void expect_abort(const char *what, void (*action)(void), const char *message) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 2);
    action();
    _exit(0);
  }
  close(p[1]);
  char buf[1024] = {0};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof buf - 1 && (r = read(p[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(buf, message)) {
    fprintf(stderr, "%s: want SIGABRT and \"%s\", got status %#x and \"%s\"\n", what, message, status, buf);
    failures++;
  }
}

static void double_free(void) {
  void *p = malloc(100);
  void *q = malloc(100); /* so p is not merged into the top */
  free(p);
  free(p);
  free(q);
}
/* freed (onto a fast list) outside, then freed again inside a window: caught when deferred */
static void double_free_deferred(void) {
  void *p = malloc(100);
  free(p);
  cape_heap_settle(1);
  cape_heap_enter(0);
  free(opaque_ptr(p));
}
static void inner_pointer(void) { free(opaque_ptr((char *)malloc(100) + 32)); }
static void misaligned(void) { free(opaque_ptr((char *)malloc(100) + 4)); }
static void overrun(void) {
  char *p = malloc(100), *q = malloc(100);
  memset(p, 0x41, 200); /* over q's header */
  free(q);
}
static void realloc_foreign(void) {
  static char not_heap[64];
  if (realloc(opaque_ptr(not_heap), 100)) abort();
}
static void no_arena(void) { free(opaque_ptr((void *)(CAPE_HEAP_NODE_BASE + 200 * CAPE_HEAP_NODE_SPAN + 64))); }

static void test_failures(void) {
  expect_abort("double free", double_free, "cape heap: free(0x");
  expect_abort("double free", double_free, "block not in use (freed twice?)");
  expect_abort("double free, the second deferred", double_free_deferred, "block not in use (freed twice?)");
  expect_abort("inner pointer", inner_pointer, "cape heap: free(0x");
  expect_abort("misaligned", misaligned, "not a block of the cape heap");
  expect_abort("overrun", overrun, "cape heap: free(0x");
  expect_abort("realloc of a foreign pointer", realloc_foreign, "cape heap: realloc(0x");
  expect_abort("no arena", no_arena, "no arena there");
  /* A pointer outside the cape heap's range is ignored by free. */
  static char not_heap[64];
  free(opaque_ptr(not_heap));
  /* Out of a node arena's space (64 GiB): NULL and ENOMEM. */
  cape_heap_settle(1);
  cape_heap_enter(0);
  errno = 0;
  CHECK(malloc(opaque((size_t)65 << 30)) == 0 && errno == ENOMEM);
  cape_heap_leave();
  cape_heap_check();
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } cases[] = {{"basic", test_basic},   {"aligned", test_aligned}, {"libc", test_libc},
               {"window", test_window}, {"mmap", test_mmap},       {"stress", test_stress},
               {"threads", test_threads}, {"nodes", test_nodes},   {"trim", test_trim},
               {"failures", test_failures}};
  if (argc != 2) {
    fprintf(stderr, "usage: heap_test CASE\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(argv[1], cases[i].name) == 0) {
      cases[i].fn();
      if (failures) fprintf(stderr, "%s: %d checks failed\n", argv[1], failures);
      else printf("%s: ok\n", argv[1]);
      return failures ? 1 : 0;
    }
  fprintf(stderr, "heap_test: unknown case '%s'\n", argv[1]);
  return 2;
}
