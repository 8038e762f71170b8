/* The program drops memory a region tracks from inside the region (issue 14, session 10):
 * in `single`, a part of a mapping every node wrote in the region before is unmapped and
 * mapped again (fresh zeros), mapped over with MAP_FIXED, or dropped with
 * madvise(MADV_DONTNEED); the brk heap shrinks and grows again. The loop after each writes
 * part of it on every node, and the sequential part prints checksums. Natively the dropped
 * pages read as zeros where the loop did not write; under cape the node that ran `single`
 * must send those zeros to the others (they still hold the old bytes). Before the fix the
 * mprotect tracker (eager and lazy) and uffd under lazy lost them without a word. Raw system
 * calls: libcape's mmap and munmap give cape-heap memory (docs/monitor.md). Then mremap in
 * `single`: grown (moved). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "contract.h"

#define PAGE 4096
#define PAGES 64

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
static void remap_fixed(void *at, size_t pages) {
  sys("mmap", SYS_mmap, (long)at, (long)(pages * PAGE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1);
}

/* Every node writes its share of every long. */
static void region(long *a, size_t pages, long seed) {
  long n = (long)(pages * PAGE / sizeof(long));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = i * 13 + seed;
}

static long *h;  /* (shared: static) */

int main(void) {
  /* 1. munmap + mmap of pages 40-60 in single; the loop adds to every fifth long. */
  h = map(PAGES);
  region(h, PAGES, 11);
#pragma omp parallel
  {
#pragma omp single
    {
      sys("munmap", SYS_munmap, (long)h + 40 * PAGE, 20 * PAGE, 0, 0, 0);
      remap_fixed((char *)h + 40 * PAGE, 20);
    }
#pragma omp for schedule(static)
    for (long i = 0; i < (long)(PAGES * PAGE / sizeof(long)); i += 5) h[i] += i;
  }
  printf("unmapped and mapped again in a region: %lu (zero bytes %lu)\n", sum(h, PAGES * PAGE),
         (unsigned long)(PAGES * PAGE - nonzero(h, PAGES * PAGE)));
  region(h, PAGES, 12);
  printf("written again: %lu\n", sum(h, PAGES * PAGE));

  /* 2. MAP_FIXED over pages 3-9 without a munmap; the loop writes only the first half. */
#pragma omp parallel
  {
#pragma omp single
    remap_fixed((char *)h + 3 * PAGE, 6);
#pragma omp for schedule(static)
    for (long i = 0; i < (long)(PAGES * PAGE / sizeof(long)) / 2; i += 7) h[i] -= 3;
  }
  printf("mapped over in a region: %lu\n", sum(h, PAGES * PAGE));

  /* 3. madvise(MADV_DONTNEED) of pages 20-36: zeros, the mapping stays. */
  region(h, PAGES, 13);
#pragma omp parallel
  {
#pragma omp single
    sys("madvise", SYS_madvise, (long)h + 20 * PAGE, 16 * PAGE, MADV_DONTNEED, 0, 0);
#pragma omp for schedule(static)
    for (long i = 0; i < (long)(PAGES * PAGE / sizeof(long)); i += 11) h[i] ^= i;
  }
  printf("dropped in a region: %lu\n", sum(h, PAGES * PAGE));

  /* 4. The whole mapping unmapped and mapped again in single, nothing written after. */
  region(h, PAGES, 14);
#pragma omp parallel
  {
#pragma omp single
    {
      sys("munmap", SYS_munmap, (long)h, PAGES * PAGE, 0, 0, 0);
      remap_fixed(h, PAGES);
    }
  }
  printf("all mapped again: %lu\n", sum(h, PAGES * PAGE));

  /* 5. The brk heap written by every node, shrunk and grown again in single (zeros). */
  char *top = (char *)sys("brk", SYS_brk, 0, 0, 0, 0, 0);
  if (sys("brk", SYS_brk, (long)(top + 32 * PAGE), 0, 0, 0, 0) != (long)(top + 32 * PAGE)) return 4;
  region((long *)top, 32, 15);
#pragma omp parallel
  {
#pragma omp single
    {
      sys("brk", SYS_brk, (long)(top + 8 * PAGE), 0, 0, 0, 0);
      sys("brk", SYS_brk, (long)(top + 32 * PAGE), 0, 0, 0, 0);
    }
#pragma omp for schedule(static)
    for (long i = 0; i < 32 * PAGE / (long)sizeof(long); i += 9) ((long *)top)[i] += 1;
  }
  printf("brk shrunk and grown in a region: %lu\n", sum(top, 32 * PAGE));
  /* 6. mremap in single: grown (moved: MREMAP_MAYMOVE); the loop after writes the new part
   *    too. Under the mprotect tracker the moved mapping carries the tracker's write
   *    protection to its new place (DirtyTracker::settle). (Not shrunk in a region: under
   *    --sync lazy the next invalidation then fails loudly, UFFDIO_REGISTER EINVAL; on main
   *    before session 10 too, left open.) */
  region(h, PAGES, 17);
#pragma omp parallel
  {
#pragma omp single
    h = (long *)sys("mremap", SYS_mremap, (long)h, PAGES * PAGE, 3 * PAGES * PAGE, MREMAP_MAYMOVE, 0);
#pragma omp for schedule(static)
    for (long i = 0; i < (long)(3 * PAGES * PAGE / sizeof(long)); i += 3) h[i] += i;
  }
  printf("grown in a region: %lu\n", sum(h, 3 * PAGES * PAGE));
  /* A last region: the determinism check compares every node's memory at its begin. */
  region(h, 3 * PAGES, 16);
  printf("last: %lu\n", sum(h, 3 * PAGES * PAGE));
  return 0;
}
