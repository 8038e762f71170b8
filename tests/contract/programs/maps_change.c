/* The program's mappings change between and inside regions (issue 14, the maps signal:
 * the monitor reads /proc/PID/maps only when they may have changed). Every change here must
 * be seen: memory the next region writes is tracked only if the monitor knows it is mapped,
 * so a missed change shows as a slave's writes missing from the output. The calls are raw
 * system calls: libcape's mmap, munmap and mremap give anonymous memory from the cape heap
 * (docs/monitor.md "The cape heap"), whose kernel mappings change only by its own mprotect;
 * those run too (malloc of large blocks, libc's mmap in the threads).
 *   - between regions: mmap, munmap, mmap again at the same address with another size
 *     (MAP_FIXED), mremap (grown, moved, shrunk), sbrk up and down, mprotect of a part;
 *   - inside regions: mmap/munmap in `single` (replayed on every node), brk in `single`;
 *   - the main stack grows deeply inside a region (a recursion in the loop body), and a
 *     region runs from deep in a recursion, sharing a local array there (its frame lies
 *     below any stack the monitor saw before);
 *   - threads: two threads map, fill and unmap memory and malloc (arenas) between regions,
 *     one stays blocked on a condition variable during the regions.
 * Every region's results are printed from the sequential part. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "contract.h"

#define N 4096
#define PAGE 4096

static long *area;          /* mapped between regions, in different ways */
static size_t area_n;       /* longs in it */
static unsigned long results[64];
static char *brk_block;     /* from sbrk in `single` */

/* The kernel's mmap, munmap, mremap, mprotect, brk. */
static void *kmmap(void *at, size_t bytes, int flags) {
  long r = syscall(SYS_mmap, at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (r < 0 && r > -4096) {
    fprintf(stderr, "mmap: error %ld\n", -r);
    exit(3);
  }
  return (void *)r;
}
static void *map(size_t bytes) { return kmmap(NULL, bytes, 0); }
static void kmunmap(void *p, size_t bytes) { syscall(SYS_munmap, p, bytes); }
static void *kmremap(void *p, size_t from, size_t to, int flags) {
  long r = syscall(SYS_mremap, p, from, to, flags, 0);
  if (r < 0 && r > -4096) {
    fprintf(stderr, "mremap: error %ld\n", -r);
    exit(3);
  }
  return (void *)r;
}
static char *kbrk(long delta) {  /* sbrk by the kernel's brk */
  char *now = (char *)syscall(SYS_brk, 0);
  if (delta && (char *)syscall(SYS_brk, now + delta) != now + delta) {
    fprintf(stderr, "brk failed\n");
    exit(3);
  }
  return now;
}

/* A region that writes all of `area`; the sequential part prints its checksum. */
static void region_over_area(int r) {
  long n = (long)area_n;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) area[i] = i * 7 + r;
  printf("region %d over %ld longs: %lu\n", r, n, sum(area, area_n * sizeof(long)));
}

/* Deep frames inside a loop body: the main stack grows (on a fault, no system call). */
static unsigned long deep(int depth, unsigned seed) {
  volatile unsigned char buf[2000];
  for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (unsigned char)(seed + i + depth);
  unsigned long h = depth > 0 ? deep(depth - 1, seed * 3 + 1) : 7;
  return h * 31 + buf[depth % sizeof buf];
}

/* A region run from deep in a recursion, sharing a local array of that frame. */
static unsigned long region_at_depth(int depth) {
  volatile char pad[2000];
  pad[0] = (char)depth;
  if (depth > 0) return region_at_depth(depth - 1) + (unsigned long)pad[0];
  long local[512];
  memset(local, 0, sizeof local);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < 512; i++) local[i] = (long)i * i + 11;
  return sum(local, sizeof local);
}

/* Threads that map memory between regions. The mutex and condition variable live in shared
 * memory (never tracked): their internal counters depend on how the threads met, which
 * differs between nodes (the determinism check would rightly see it in tracked memory). */
struct sync {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int work_round, done_round, quit;
};
static struct sync *sy;
#define mu (sy->mu)
#define cv (sy->cv)
#define work_round (sy->work_round)
#define done_round (sy->done_round)
#define quit (sy->quit)
static unsigned long thread_result;

static void *mapper(void *arg) {
  long id = (long)arg;
  size_t bytes = (size_t)(5 + id) * PAGE * 16;
  unsigned char *p = map(bytes);
  fill(p, bytes, 40 + (unsigned)id);
  unsigned long h = sum(p, bytes);
  kmunmap(p, bytes);
  unsigned char *q = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  fill(q, bytes, 50 + (unsigned)id);
  h = h * 3 + sum(q, bytes);
  munmap(q, bytes);
  void *m = malloc(200000 + (size_t)id * 1000);  /* a large block: an mmap of its own */
  memset(m, (int)id, 1000);
  free(m);
  return (void *)h;
}

static void *sleeper(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (work_round == done_round && !quit) pthread_cond_wait(&cv, &mu);
    if (quit) break;
    /* Woken between regions: map something and keep it. */
    size_t bytes = (size_t)(work_round + 1) * PAGE * 8;
    unsigned char *p = map(bytes);
    fill(p, bytes, (unsigned)work_round);
    thread_result = thread_result * 13 + sum(p, bytes);
    done_round = work_round;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

static void sleeper_round(int r) {
  pthread_mutex_lock(&mu);
  work_round = r;
  pthread_cond_broadcast(&cv);
  while (done_round != r) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

int main(void) {
  sy = mmap(NULL, sizeof *sy, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sy == MAP_FAILED) {
    perror("mmap shared");
    return 3;
  }
  pthread_mutex_init(&mu, NULL);
  pthread_cond_init(&cv, NULL);
  pthread_t sl;
  pthread_create(&sl, NULL, sleeper, NULL);
  sleeper_round(1);

  /* 1. A fresh mapping. */
  area_n = 3 * PAGE / sizeof(long);
  area = map(area_n * sizeof(long));
  region_over_area(1);

  /* 2. Unmapped and mapped again at the same address, smaller (larger would take what
   *    lies above it). */
  long *old = area;
  kmunmap(area, area_n * sizeof(long));
  area_n = 2 * PAGE / sizeof(long);
  area = kmmap(old, area_n * sizeof(long), MAP_FIXED);
  region_over_area(2);

  /* 3. mremap: grown (maybe moved), then shrunk. */
  size_t grown = 40 * PAGE / sizeof(long);
  area = kmremap(area, area_n * sizeof(long), grown * sizeof(long), MREMAP_MAYMOVE);
  area_n = grown;
  region_over_area(3);
  area = kmremap(area, area_n * sizeof(long), 20 * PAGE, 0);
  area_n = 20 * PAGE / sizeof(long);
  region_over_area(4);

  /* 4. A part made read-only and back: the region writes all of it again. */
  syscall(SYS_mprotect, area, 4 * PAGE, PROT_READ);
  syscall(SYS_mprotect, area, 4 * PAGE, PROT_READ | PROT_WRITE);
  region_over_area(5);

  /* 5. Threads map and unmap between regions. */
  unsigned long th = 0;
  for (long i = 0; i < 2; i++) {  /* one after the other: the heap's state is the same on every node */
    pthread_t t;
    void *h;
    pthread_create(&t, NULL, mapper, (void *)i);
    pthread_join(t, &h);
    th = th * 31 + (unsigned long)h;
  }
  printf("threads mapped: %lu\n", th);
  sleeper_round(2);
  kmunmap(area, area_n * sizeof(long));
  area_n = 2 * PAGE / sizeof(long);
  area = map(area_n * sizeof(long));
  region_over_area(6);

  /* 6. The heap by sbrk between regions, and in `single`. */
  char *b = kbrk(16 * PAGE);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < 16 * PAGE; i++) b[i] = (char)(i * 5 + 1);
  printf("sbrk block: %lu\n", sum(b, 16 * PAGE));
  kbrk(-8 * PAGE);
#pragma omp parallel
  {
#pragma omp single
    {
      brk_block = kbrk(4 * PAGE);
      memset(brk_block, 9, 4 * PAGE);
    }
#pragma omp for schedule(static)
    for (int i = 0; i < 4 * PAGE; i += 64) brk_block[i] = (char)(i / 64);
  }
  printf("brk in single: %lu\n", sum(brk_block, 4 * PAGE));

  /* 7. mmap and munmap in `single`, used by the loop on every node. */
  static long *in_single;
#pragma omp parallel
  {
#pragma omp single
    {
      void *gone = map(3 * PAGE);
      kmunmap(gone, 3 * PAGE);
      in_single = map(6 * PAGE);
    }
#pragma omp for schedule(static)
    for (int i = 0; i < 6 * PAGE / 8; i++) in_single[i] = i * 3 + 2;
  }
  printf("mapped in single: %lu\n", sum(in_single, 6 * PAGE));

  /* 8. The stack grows deeply inside a region, then a region from deep in a recursion. */
#pragma omp parallel for schedule(static)
  for (int i = 0; i < 64; i++) results[i] = deep(300 + i * 5, (unsigned)i);
  printf("deep frames: %lu\n", sum(results, sizeof results));
  printf("region at depth 400: %lu\n", region_at_depth(400));
  printf("region at depth 1000: %lu\n", region_at_depth(1000));

  /* 9. After all that, the first kind again. */
  sleeper_round(3);
  area_n = 5 * PAGE / sizeof(long);
  area = map(area_n * sizeof(long));
  region_over_area(7);

  pthread_mutex_lock(&mu);
  quit = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(sl, NULL);
  printf("sleeper: %lu\n", thread_result);
  return 0;
}
