/* --sync=lazy and the program's own mapping calls (tests/lazy): after a region the pages other
 * nodes wrote are invalid on a node (registered in userfaultfd's missing mode, dropped) until
 * touched. Here the sequential part, or `single` inside a region, changes those mappings
 * before anything reads them: mremap grown (moved) and moved to a fixed place, shrunk, moved
 * with MREMAP_DONTUNMAP; munmap of a part and a fresh mapping in its place; madvise
 * (MADV_DONTNEED) of a part; mprotect read-only, then read; the brk heap shrunk and grown
 * again. Each must give what it gives natively: a moved area keeps the region's values, a
 * fresh or dropped page reads zeros. Every call is the kernel's (raw system calls), and every
 * mapping call must succeed (a split mapping makes mremap fail with EFAULT). Compared with
 * gcc -fopenmp's output (tests/lazy/CMakeLists.txt). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 64 /* an area: 64 pages, every node writes about a third of it */

static long sys(const char *what, long nr, long a, long b, long c, long d, long e) {
  long r = syscall(nr, a, b, c, d, e, 0);
  if (r == -1) {
    perror(what);
    exit(3);
  }
  return r;
}
static long *map(size_t pages) {
  return (long *)sys("mmap", SYS_mmap, 0, (long)(pages * PAGE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
}
static long *remap(long *p, size_t from, size_t to, long flags, long *at) {
  return (long *)sys("mremap", SYS_mremap, (long)p, (long)(from * PAGE), (long)(to * PAGE), flags, (long)at);
}

static unsigned long sum(const void *p, size_t pages) {
  const unsigned char *c = p;
  unsigned long h = 1469598103934665603ul;
  for (size_t i = 0; i < pages * PAGE; i++) h = (h ^ c[i]) * 1099511628211ul;
  return h;
}

/* Every node writes its share of the area's longs. */
static void region(long *a, size_t pages, long seed) {
  long n = (long)(pages * PAGE / sizeof(long));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = i * 13 + seed;
}

int main(int argc, char **argv) {
  /* "no-region-maps": not case 8 (until session 10 the mprotect tracker followed neither a
   * tracked mapping moved inside a region nor one unmapped and mapped again there). */
  int region_maps = !(argc > 1 && strcmp(argv[1], "no-region-maps") == 0);
  /* 1. Grown with MREMAP_MAYMOVE (moved: the area below the last mapping cannot grow). */
  long *a = map(PAGES);
  region(a, PAGES, 1);
  a = remap(a, PAGES, 3 * PAGES, MREMAP_MAYMOVE, NULL);
  printf("grown: %lu, tail %lu\n", sum(a, PAGES), sum(a + PAGES * PAGE / sizeof(long), 2 * PAGES));
  region(a, 3 * PAGES, 2);
  printf("grown, written: %lu\n", sum(a, 3 * PAGES));

  /* 2. Moved to a fixed place (over a mapping of ours, which it replaces). */
  long *b = map(PAGES), *place = map(PAGES);
  region(b, PAGES, 3);
  b = remap(b, PAGES, PAGES, MREMAP_MAYMOVE | MREMAP_FIXED, place);
  printf("moved to a fixed place: %d %lu\n", b == place, sum(b, PAGES));

  /* 3. Shrunk in place, then grown in place if it can be. */
  long *c = map(PAGES);
  region(c, PAGES, 4);
  c = remap(c, PAGES, 10, 0, NULL);
  printf("shrunk: %lu\n", sum(c, 10));

  /* 4. Moved with MREMAP_DONTUNMAP: the old place stays mapped, empty. */
  long *d = map(PAGES);
  region(d, PAGES, 5);
  long *d2 = remap(d, PAGES, PAGES, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
  printf("dontunmap: moved %lu, left %lu\n", sum(d2, PAGES), sum(d, PAGES));

  /* 5. A part unmapped and mapped again (fresh zeros), the rest kept. */
  long *e = map(PAGES);
  region(e, PAGES, 6);
  char *hole = (char *)e + 16 * PAGE;
  sys("munmap", SYS_munmap, (long)hole, 32 * PAGE, 0, 0, 0);
  sys("mmap", SYS_mmap, (long)hole, 32 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1);
  printf("unmapped and mapped again: %lu\n", sum(e, PAGES));
  region(e, PAGES, 7);
  printf("written again: %lu\n", sum(e, PAGES));

  /* 6. A part dropped (MADV_DONTNEED: zeros), read after. */
  long *f = map(PAGES);
  region(f, PAGES, 8);
  sys("madvise", SYS_madvise, (long)f + 8 * PAGE, 16 * PAGE, MADV_DONTNEED, 0, 0);
  printf("dropped: %lu\n", sum(f, PAGES));

  /* 7. Read-only, read (the fetch fills a read-only mapping), then writable again. */
  long *g = map(PAGES);
  region(g, PAGES, 9);
  sys("mprotect", SYS_mprotect, (long)g, PAGES * PAGE, PROT_READ, 0, 0);
  printf("read-only: %lu\n", sum(g, PAGES));
  sys("mprotect", SYS_mprotect, (long)g, PAGES * PAGE, PROT_READ | PROT_WRITE, 0, 0);
  region(g, PAGES, 10);
  printf("writable again: %lu\n", sum(g, PAGES));

  /* 8. Inside regions, in `single`: a written area grown (moved), then a part unmapped and
   *    mapped again; the loop after each writes the result. */
  static long *h;
  if (region_maps) {
    h = map(PAGES);
    region(h, PAGES, 11);
#pragma omp parallel
    {
#pragma omp single
      h = remap(h, PAGES, 2 * PAGES, MREMAP_MAYMOVE, NULL);
#pragma omp for schedule(static)
      for (long i = 0; i < (long)(2 * PAGES * PAGE / sizeof(long)); i += 3) h[i] += i;
    }
    printf("grown in a region: %lu\n", sum(h, 2 * PAGES));
    region(h, 2 * PAGES, 12);
#pragma omp parallel
    {
#pragma omp single
      {
        sys("munmap", SYS_munmap, (long)h + 40 * PAGE, 20 * PAGE, 0, 0, 0);
        sys("mmap", SYS_mmap, (long)h + 40 * PAGE, 20 * PAGE, PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1);
      }
#pragma omp for schedule(static)
      for (long i = 0; i < (long)(2 * PAGES * PAGE / sizeof(long)); i += 5) h[i] += i;
    }
    printf("mapped again in a region: %lu\n", sum(h, 2 * PAGES));
  }

  /* 9. The brk heap: grown, written, shrunk and grown again (zeros), given back. */
  char *top = (char *)sys("brk", SYS_brk, 0, 0, 0, 0, 0);
  if (sys("brk", SYS_brk, (long)(top + 32 * PAGE), 0, 0, 0, 0) != (long)(top + 32 * PAGE)) return 4;
  region((long *)top, 32, 13);
  sys("brk", SYS_brk, (long)top, 0, 0, 0, 0);
  sys("brk", SYS_brk, (long)(top + 32 * PAGE), 0, 0, 0, 0);
  unsigned long again = sum(top, 32);
  sys("brk", SYS_brk, (long)top, 0, 0, 0, 0);
  printf("brk grown again: %lu\n", again);
  return 0;
}
