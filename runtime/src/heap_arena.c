/* The cape heap's arenas (docs/monitor.md "The cape heap"; the whole design is in
 * heap_internal.h): their reservation at fixed addresses, growing and trimming the committed
 * part, and the windows.
 *
 * Inside a window a node touches only its own arena's words (and the blocks it writes), so
 * two nodes allocating at once never write the same word. A free inside a window of a block
 * that belongs to another arena is deferred: the block is pushed on a list in the node's own
 * arena (linked through the block's first word) and freed for real by settle(), which runs
 * where every node holds the same memory (before cape_start()'s trap, and at the first
 * allocator call after a window), so every node frees the same blocks in the same order.
 *
 * The top (the free space at the end of the committed part) grows by mprotect in steps of
 * 1/16 of the arena (64 KiB .. 64 MiB). Memory goes back to the kernel (the top beyond
 * 512 KiB, once it exceeds the trim threshold) only outside windows, where every node does
 * the same.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "heap_internal.h"

/* Process-wide: 0 not set up, 1 being set up, 2 ready. In the executable's .bss, so it is
 * tracked, but written once before the first allocation, the same way on every node. */
int cape_heap_state;

/* Per thread, never in tracked memory (the main thread's static TLS is not tracked,
 * docs/monitor.md). */
TLS int cape_heap_tls_in_window;
TLS struct arena *cape_heap_tls_own;
TLS int cape_heap_tls_settle_pending;

/* cape.c refers to this file (cape_heap_init and the window hooks), so a program linked with
 * libcape.a always takes it; this table takes the entry points' files with it. The program's
 * malloc and mmap must be the cape heap's even when it never calls them itself: libc and
 * ld.so do, through the executable's exported symbols. */
__attribute__((used)) static void *const heap_parts[] = {(void *)malloc, (void *)mmap};

/* ---- setting up ---- */

static void setup_arena(unsigned i) {
  uintptr_t base = arena_base(i);
  size_t span = (i == 0 ? CAPE_HEAP_ARENA0_SPAN : CAPE_HEAP_NODE_SPAN) - CAPE_HEAP_GAP;
  long r;
  /* RLIMIT_AS counts reservations too: take what the limit allows (the same on every node). */
  for (;;) {
    r = sys6(SYS_mmap, (long)base, (long)span, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (r != -ENOMEM || span / 2 < RESERVE_MIN) break;
    span /= 2;
  }
  if (r != (long)base) {
    if (r >= 0) sys3(SYS_munmap, r, span, 0); /* a kernel older than MAP_FIXED_NOREPLACE (4.17) */
    cape_heap_fail("reserve", (void *)base,
                   r == -EEXIST ? "the cape heap's address range is already mapped (docs/monitor.md)"
                                : "cannot reserve the cape heap's address range");
  }
  size_t initial = i == 0 ? ARENA0_INITIAL : NODE_INITIAL;
  if (sys3(SYS_mprotect, base, initial, PROT_READ | PROT_WRITE) != 0)
    cape_heap_fail("reserve", (void *)base, "cannot commit the first pages of a cape heap arena");
  struct arena *a = (struct arena *)base;
  a->magic = CAPE_HEAP_ARENA_MAGIC ^ i;
  a->committed_end = (char *)base + initial;
  a->reserved_end = (char *)base + span;
  a->index = i;
  a->trim_threshold = TRIM_MIN;
  for (unsigned k = 0; k < NBINS; k++) a->bins[2 * k] = a->bins[2 * k + 1] = bin_at(a, k);
  a->top = (struct chunk *)(base + HDR_SIZE);
  a->top->head = (initial - HDR_SIZE) | PINUSE;
  a->fresh = (char *)a->top + 16;
  a->st.base = base;
  a->st.committed = initial;
  a->st.reserved = span;
}

void cape_heap_init(void) {
  if (__atomic_load_n(&cape_heap_state, __ATOMIC_ACQUIRE) == 2) return;
  int expected = 0;
  if (__atomic_compare_exchange_n(&cape_heap_state, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
    setup_arena(0);
    __atomic_store_n(&cape_heap_state, 2, __ATOMIC_RELEASE);
    return;
  }
  while (__atomic_load_n(&cape_heap_state, __ATOMIC_ACQUIRE) != 2) sys3(SYS_sched_yield, 0, 0, 0);
}

__attribute__((constructor(101))) static void heap_constructor(void) { cape_heap_init(); }

/* ---- growing and trimming ---- */

/* Commits at least `need` more bytes at the top (mprotect of the next part of the
 * reservation). Inside a window this changes this node's mappings only; the monitor replays
 * the mprotect on the other nodes before it writes the data (docs/monitor.md). */
int cape_heap_grow(struct arena *a, size_t need) {
  size_t committed = (size_t)(a->committed_end - (char *)a);
  size_t step = committed / 16;
  if (step < STEP_MIN) step = STEP_MIN;
  if (step > STEP_MAX) step = STEP_MAX;
  if (step < need) step = need;
  step = (step + PAGE - 1) & ~(PAGE - 1);
  size_t room = (size_t)(a->reserved_end - a->committed_end);
  if (step > room) step = room;
  if (step < need) return 0;
  if (sys3(SYS_mprotect, a->committed_end, step, PROT_READ | PROT_WRITE) != 0) return 0;
  a->committed_end += step;
  a->top->head = (size_t)(a->committed_end - (char *)a->top) | PINUSE;
  a->st.committed += step;
  a->st.grows++;
  return 1;
}

/* Gives the top beyond `keep` back to the kernel (a fresh PROT_NONE reservation over it:
 * the pages are dropped). Only outside windows, where every node does the same: inside
 * one, a node dropping pages would change bytes no tracker sees. */
void cape_heap_trim(struct arena *a, size_t keep) {
  char *end = (char *)(((uintptr_t)a->top + 16 + MINCHUNK + keep + PAGE - 1) & ~(PAGE - 1));
  if (end >= a->committed_end) return;
  size_t len = (size_t)(a->committed_end - end);
  if (sys6(SYS_mmap, (long)end, (long)len, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != (long)end)
    return; /* keep it committed: nothing is lost */
  a->committed_end = end;
  a->top->head = (size_t)(end - (char *)a->top) | PINUSE;
  if (a->fresh > end) a->fresh = end;
  a->st.committed -= len;
  a->st.trims++;
}

/* ---- windows ---- */

/* Every deferred free of every node arena, in arena order: the same on every node. */
void cape_heap_settle_deferred(void) {
  cape_heap_tls_settle_pending = 0;
  unsigned nodes = A0->nodes;
  for (unsigned i = 1; i <= nodes; i++) {
    struct arena *n = ARENA(i);
    if (!n->deferred) continue;
    int h = lock(n);
    struct chunk *list = n->deferred;
    n->deferred = 0;
    n->st.deferred = 0;
    unlock(n, h);
    while (list) {
      struct chunk *next = list->fd;
      struct arena *a = arena_of((uintptr_t)list, "free (deferred)");
      int ha = lock(a);
      cape_heap_release(a, checked(a, mem(list), "free (deferred)"));
      a->st.frees++;
      unlock(a, ha);
      list = next;
    }
  }
}

void cape_heap_settle(int nodes) {
  ready();
  if (cape_heap_tls_in_window) return; /* cape_start() twice without cape_stop(): nothing is settled inside */
  if (nodes > CAPE_HEAP_MAX_NODES) cape_heap_fail("cape_start", 0, "more nodes than the cape heap has arenas (256)");
  int h = lock(A0);
  while ((int)A0->nodes < nodes) {
    setup_arena(A0->nodes + 1);
    A0->nodes++;
  }
  unlock(A0, h);
  cape_heap_settle_deferred();
}

void cape_heap_enter(int rank) {
  ready();
  if (rank < 0 || rank >= (int)A0->nodes)
    cape_heap_fail("cape_start", 0, "window entered for a node whose arena is not set up (cape_heap_settle)");
  cape_heap_tls_own = ARENA(1 + (unsigned)rank);
  cape_heap_tls_in_window = 1;
}

void cape_heap_leave(void) {
  if (!cape_heap_tls_in_window) return;
  cape_heap_tls_in_window = 0;
  cape_heap_tls_own = 0;
  cape_heap_tls_settle_pending = 1;
}

int cape_heap_in_window(void) { return cape_heap_tls_in_window; }

/* Another thread of the node joins the window (cape.h, the two-level model); it settles
 * nothing when it leaves: the window's own thread does that for the node. */
int cape_thread_enter_window(int rank) {
  if (cape_heap_tls_in_window) return 0;
  cape_heap_enter(rank);
  return 1;
}

void cape_thread_leave_window(void) {
  cape_heap_tls_in_window = 0;
  cape_heap_tls_own = 0;
}
