/* cape_bench_runtime: the cape heap (runtime/src/heap_*.c) against glibc's malloc, in the same
 * process and the same run: this program's malloc is the cape heap's, and glibc's allocator
 * is still there behind __libc_malloc / __libc_free / __libc_realloc / __libc_calloc. Both
 * are called through the same function pointers; each workload runs alternately on the two
 * allocators, 5 times, and the medians are compared (docs/monitor.md has a table of this).
 *
 *   small pairs          malloc(n) + free, n = 16, 64, 256, 1000
 *   list build/teardown  10,000 blocks of 16-512 B, then freed in random order
 *   mixed sizes          a working set of 10,000 blocks of 16 B .. 64 KiB, one replaced per op
 *   realloc growth       a block grown by 4 KiB steps up to 8 MiB, one byte written per page
 *   realloc doubling     16 B doubled up to 8 MiB
 *   calloc big           calloc(1 / 8 / 64 MiB), one byte read per page, free
 *   cape only: the list workload with its frees made inside a window (deferred, settled),
 *   against the same frees made directly; what settle + enter + leave cost per window
 *   memory overhead      bytes the allocator holds / bytes asked, for 100,000 live blocks
 */
#define _GNU_SOURCE
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heap.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_calloc(size_t, size_t);

struct api {
  const char *name;
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*realloc)(void *, size_t);
  void *(*calloc)(size_t, size_t);
};
static const struct api glibc = {"glibc", __libc_malloc, __libc_free, __libc_realloc, __libc_calloc};
static const struct api cape = {"cape", malloc, free, realloc, calloc};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* the machine is shared: CPU time, kernel time included */
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static volatile uintptr_t sink;

/* Each workload returns nanoseconds per operation. */
typedef double (*workload)(const struct api *, long);

static double small_pairs(const struct api *a, long n) {
  enum { ROUNDS = 2000000 };
  double t = now();
  for (long i = 0; i < ROUNDS; i++) {
    char *p = a->malloc((size_t)n);
    p[0] = (char)i;
    sink += (uintptr_t)p;
    a->free(p);
  }
  return (now() - t) / ROUNDS;
}

static double list_build(const struct api *a, long unused) {
  (void)unused;
  enum { N = 10000, ROUNDS = 30 };
  static void *blocks[N];
  static unsigned order[N];
  for (unsigned i = 0; i < N; i++) order[i] = i;
  for (unsigned i = N - 1; i > 0; i--) {
    unsigned j = (unsigned)(rnd() % (i + 1)), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  double t = now();
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N; i++) {
      blocks[i] = a->malloc(16 + (size_t)(order[i] % 497));
      *(int *)blocks[i] = i;
    }
    for (int i = 0; i < N; i++) a->free(blocks[order[i]]);
  }
  return (now() - t) / ((double)N * ROUNDS);
}

static size_t mixed_size(void) {
  unsigned e = (unsigned)(rnd() % 13), f = (unsigned)(rnd() % 13);
  if (f < e) e = f;
  return ((size_t)16 << e) + rnd() % ((size_t)16 << e); /* 16 B .. 64 KiB, small ones more often */
}

static double mixed(const struct api *a, long unused) {
  (void)unused;
  enum { N = 10000, OPS = 400000 };
  static void *blocks[N];
  for (int i = 0; i < N; i++) blocks[i] = a->malloc(mixed_size());
  double t = now();
  for (int op = 0; op < OPS; op++) {
    unsigned k = (unsigned)(rnd() % N);
    a->free(blocks[k]);
    size_t n = mixed_size();
    blocks[k] = a->malloc(n);
    ((char *)blocks[k])[n - 1] = 1;
  }
  double per = (now() - t) / OPS;
  for (int i = 0; i < N; i++) a->free(blocks[i]);
  return per;
}

static double realloc_steps(const struct api *a, long unused) {
  (void)unused;
  enum { ROUNDS = 20, TOP = 8 << 20, STEP = 4096 };
  double t = now();
  for (int r = 0; r < ROUNDS; r++) {
    char *p = 0;
    for (size_t n = STEP; n <= TOP; n += STEP) {
      p = a->realloc(p, n);
      p[n - 1] = 1;
    }
    a->free(p);
  }
  return (now() - t) / ((double)ROUNDS * (TOP / STEP));
}

static double realloc_doubling(const struct api *a, long unused) {
  (void)unused;
  enum { ROUNDS = 200 };
  double t = now();
  int ops = 0;
  for (int r = 0; r < ROUNDS; r++) {
    char *p = 0;
    for (size_t n = 16; n <= (8u << 20); n *= 2, ops++) {
      p = a->realloc(p, n);
      p[n - 1] = 1;
    }
    a->free(p);
  }
  return (now() - t) / ops;
}

static double calloc_big(const struct api *a, long mib) {
  size_t n = (size_t)mib << 20;
  int rounds = (int)(256 / mib) + 2;
  double t = now();
  for (int r = 0; r < rounds; r++) {
    char *p = a->calloc(1, n);
    for (size_t i = 0; i < n; i += 4096) sink += (uintptr_t)p[i];
    a->free(p);
  }
  return (now() - t) / rounds;
}

/* The list workload again, its frees made inside a window (deferred: arena 0's blocks) and
 * performed by the next settle. `direct` = 1: the same without the window. */
static double list_window(int direct) {
  enum { N = 10000, ROUNDS = 30 };
  static void *blocks[N];
  static unsigned order[N];
  for (unsigned i = 0; i < N; i++) order[i] = i;
  for (unsigned i = N - 1; i > 0; i--) {
    unsigned j = (unsigned)(rnd() % (i + 1)), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  cape_heap_settle(1);
  double t = now();
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N; i++) {
      blocks[i] = malloc(16 + (size_t)(order[i] % 497));
      *(int *)blocks[i] = i;
    }
    if (!direct) cape_heap_enter(0);
    for (int i = 0; i < N; i++) free(blocks[order[i]]);
    if (!direct) {
      cape_heap_leave();
      cape_heap_settle(1);
    }
  }
  return (now() - t) / ((double)N * ROUNDS);
}

/* What a window costs the heap when nothing was deferred: settle + enter + leave. */
static double window_cost(int nodes) {
  enum { ROUNDS = 100000 };
  cape_heap_settle(nodes); /* sets the node arenas up once */
  double t = now();
  for (int r = 0; r < ROUNDS; r++) {
    cape_heap_settle(nodes);
    cape_heap_enter(0);
    cape_heap_leave();
  }
  return (now() - t) / ROUNDS;
}

/* What libcape adds to every runtime call besides the trap: stdout and stderr flushed. */
static double flush_cost(void) {
  enum { ROUNDS = 1000000 };
  double t = now();
  for (int r = 0; r < ROUNDS; r++) {
    fflush(stdout);
    fflush(stderr);
  }
  return (now() - t) / ROUNDS;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void compare(const char *what, const char *unit, workload w, long arg, double scale) {
  double g[5], c[5];
  for (int i = 0; i < 5; i++) {
    g[i] = w(&glibc, arg) / scale;
    c[i] = w(&cape, arg) / scale;
  }
  qsort(g, 5, sizeof g[0], cmp_double);
  qsort(c, 5, sizeof c[0], cmp_double);
  printf("| %-34s | %10.2f %-3s | %10.2f %-3s | %6.2f |\n", what, g[2], unit, c[2], unit, c[2] / g[2]);
}

/* Bytes the allocator holds for 100,000 live blocks of 16 .. 1024 B, against the bytes asked. */
static void overhead(void) {
  enum { N = 100000 };
  static void *b[N];
  size_t asked = 0;
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < N; i++) {
    size_t n = 16 + rnd() % 1009;
    asked += n;
    b[i] = __libc_malloc(n);
  }
  struct mallinfo2 after = mallinfo2();
  size_t g = (after.arena + after.hblkhd) - (before.arena + before.hblkhd);
  size_t g_used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
  for (int i = 0; i < N; i++) __libc_free(b[i]);
  struct cape_heap_stats s0, s1;
  cape_heap_stats(0, &s0);
  rng = 88172645463325252ULL;
  size_t asked2 = 0;
  for (int i = 0; i < N; i++) {
    size_t n = 16 + rnd() % 1009;
    asked2 += n;
    b[i] = malloc(n);
  }
  cape_heap_stats(0, &s1);
  printf("| %-34s | %10.3f     | %10.3f     | %6.2f |\n", "held / asked, 100k x 16-1024 B",
         (double)g / (double)asked, (double)(s1.committed - s0.committed) / (double)asked2,
         ((double)(s1.committed - s0.committed) / (double)asked2) / ((double)g / (double)asked));
  printf("| %-34s | %10.3f     | %10.3f     | %6.2f |\n", "  in use / asked (headers, rounding)",
         (double)g_used / (double)asked, (double)(s1.in_use - s0.in_use) / (double)asked2,
         ((double)(s1.in_use - s0.in_use) / (double)asked2) / ((double)g_used / (double)asked));
  for (int i = 0; i < N; i++) free(b[i]);
  for (int k = 0; k < 2; k++) {
    size_t n = k ? 24 : 16;
    void *p = __libc_malloc(n), *q = malloc(n);
    size_t glibc_chunk = ((size_t *)p)[-1] & ~(size_t)7; /* glibc's header: size | 3 flag bits */
    printf("| %-34s | %10zu B   | %10zu B   |        |\n", k ? "  chunk of malloc(24)" : "  chunk of malloc(16)",
           glibc_chunk, malloc_usable_size(q) + 8);
    __libc_free(p);
    free(q);
  }
}

int main(void) {
  printf("cape heap vs glibc %s, same process, medians of 5 alternate runs (ratio = cape / glibc)\n\n",
         gnu_get_libc_version());
  printf("| %-34s | %14s | %14s | %6s |\n", "workload", "glibc", "cape", "ratio");
  printf("|%s|%s|%s|%s|\n", "------------------------------------", "----------------", "----------------", "--------");
  overhead(); /* first, while both allocators are fresh */
  compare("malloc+free pair, 16 B", "ns", small_pairs, 16, 1);
  compare("malloc+free pair, 64 B", "ns", small_pairs, 64, 1);
  compare("malloc+free pair, 256 B", "ns", small_pairs, 256, 1);
  compare("malloc+free pair, 1000 B", "ns", small_pairs, 1000, 1);
  compare("list of 10k, 16-512 B, random free", "ns", list_build, 0, 1);
  compare("mixed 16 B-64 KiB, 10k live", "ns", mixed, 0, 1);
  compare("realloc +4 KiB steps to 8 MiB", "ns", realloc_steps, 0, 1);
  compare("realloc doubling 16 B to 8 MiB", "us", realloc_doubling, 0, 1000);
  compare("calloc 1 MiB, read, free", "us", calloc_big, 1, 1000);
  compare("calloc 8 MiB, read, free", "us", calloc_big, 8, 1000);
  compare("calloc 64 MiB, read, free", "us", calloc_big, 64, 1000);

  printf("\n| %-34s | %14s | %14s | %6s |\n", "cape only", "direct", "in a window", "ratio");
  printf("|%s|%s|%s|%s|\n", "------------------------------------", "----------------", "----------------", "--------");
  double d[5], w[5];
  for (int i = 0; i < 5; i++) {
    d[i] = list_window(1);
    w[i] = list_window(0);
  }
  qsort(d, 5, sizeof d[0], cmp_double);
  qsort(w, 5, sizeof w[0], cmp_double);
  printf("| %-34s | %10.2f ns  | %10.2f ns  | %6.2f |\n", "list of 10k, frees deferred+settled", d[2], w[2], w[2] / d[2]);
  printf("| %-34s | %14s | %10.2f ns  |        |\n", "settle+enter+leave, 3 nodes", "", window_cost(3));
  printf("| %-34s | %14s | %10.2f ns  |        |\n", "settle+enter+leave, 256 nodes", "", window_cost(256));
  fflush(stdout);
  printf("| %-34s | %14s | %10.2f ns  |        |\n", "flush stdout+stderr, nothing buffered", "", flush_cost());
  return 0;
}
