/* Anonymous mmap, munmap and mremap served from the cape heap (heap_test.c runs it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap_test.h"

/* ---- mmap ---- */

void test_mmap(void) {
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
