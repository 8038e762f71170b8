/* The cape heap as the C library's allocator: every size class, alignment, libc's own
 * allocations, giving the top back (heap_test.c runs them). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "heap_test.h"

/* ---- basic ---- */

void test_basic(void) {
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

void test_aligned(void) {
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

void test_libc(void) {
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

/* ---- trim ---- */

void test_trim(void) {
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
