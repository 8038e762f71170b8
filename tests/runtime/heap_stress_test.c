/* The cape heap under random load, in and out of windows, and from several threads
 * (heap_test.c runs them). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>

#include "heap_test.h"

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

void test_stress(void) {
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

void test_threads(void) {
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
