/* The cape heap's own parts: what its files share (docs/monitor.md "The cape heap"). Hidden,
 * as heap.h: nothing here is part of the program's API. The hooks cape.c calls are in heap.h.
 *
 * The cape heap: malloc and friends, and anonymous mmap, served from arenas at fixed
 * addresses in the program's tracked memory.
 *
 * Why: every node runs the same program and a region's writes travel as checkpoints of the
 * tracked memory. glibc keeps its allocator state in libc's .data, which is not tracked, and
 * grows [heap] on the one node that allocates, so after an allocation on one node the nodes
 * disagree about the heap. Here all allocator state lives inside the arenas it manages, so
 * an allocation is just more writes of tracked memory: it travels like any other, and after
 * every exchange every node has the same allocator state at the same addresses.
 *
 *   arena 0                 (CAPE_HEAP_BASE, 32 TiB)  outside windows: identical on every node
 *   arena 1 + r             (CAPE_HEAP_NODE_BASE + r * 64 GiB)  node r inside its windows
 *
 * The files:
 *   heap_arena.c   the arenas: reservation, commit and trim, windows, deferred frees (settle)
 *   heap_chunk.c   the chunk allocator inside one arena: bins, fast lists, split and
 *                  coalesce, the top
 *   heap_api.c     the C library's allocator interface (malloc family, aligned allocations)
 *   heap_mmap.c    anonymous mmap, munmap and mremap served from the heap
 *   heap_check.c   failure messages; stats and consistency checks for the tests and the bench
 * The hot paths (malloc and free of small blocks: the fast lists, the pointer checks, the
 * arena of the moment) are static inline functions here, so heap_api.c inlines them as the
 * single heap.c did; only what was a call before (the bins, coalescing, settle) crosses files.
 *
 * A program linked with libcape.a takes every part: cape.c refers to heap_arena.c (the hooks),
 * which refers to malloc and mmap (heap_arena.c, heap_parts), and they to the rest.
 *
 * Names with external linkage are prefixed cape_heap_: hidden symbols are still global in a
 * static link, and the program may have a release() or a grow() of its own.
 */
#ifndef CAPE_HEAP_INTERNAL_H
#define CAPE_HEAP_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>

#include "heap.h"
#include "protocol.h"

#pragma GCC visibility push(hidden)

#define KiB (1UL << 10)
#define MiB (1UL << 20)
#define PAGE 4096UL

#define ARENA0_INITIAL (64 * KiB)  /* committed when arena 0 is set up */
#define NODE_INITIAL (16 * KiB)    /* ... a node arena: room for small blocks without growing */
#define STEP_MIN (64 * KiB)        /* growth: 1/16 of the committed size, within these */
#define STEP_MAX (64 * MiB)
#define TRIM_MIN (2 * MiB)         /* trim threshold: the top beyond this is given back ... */
#define TRIM_MAX (16 * MiB)        /* (raised to twice the largest block freed into the top) */
#define TRIM_KEEP (512 * KiB)      /* ... keeping this much */
#define RESERVE_MIN (16 * MiB)     /* smallest reservation tried under RLIMIT_AS */
#define LARGE_SCAN 32              /* chunks examined for a best fit in a large bin */
#define REALLOC_TOP (128 * KiB)    /* realloc moves blocks this large to the top */
#define MAX_REQUEST ((size_t)1 << 46)

/* ---- raw system calls: no errno, no PLT, usable before libc is ready ---- */

static inline long sys6(long nr, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#define sys3(nr, a, b, c) sys6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* Writes "cape heap: CALL(PTR): WHAT" on stderr and aborts (heap_check.c). */
__attribute__((noreturn, cold)) void cape_heap_fail(const char *call, const void *p, const char *what);

/* ---- chunks ---- */

struct chunk {
  size_t prev_size;       /* size of the previous chunk, when it is free */
  size_t head;            /* size | flags */
  struct chunk *fd, *bk;  /* free chunks: the bin's list; deferred: fd links the list */
};

#define PINUSE 1UL /* the previous chunk is in use */
#define CINUSE 2UL /* this chunk is in use */
#define MAPPED 4UL /* handed out by mmap() */
#define FLAGS 15UL
#define MINCHUNK 32UL
#define SMALL_LIMIT 1024UL
#define NSMALL 64   /* bins 2 .. 63: sizes 32 .. 1008 */
#define NLARGE 128  /* 4 per power of two from 1 KiB; the last takes everything above */
#define NBINS (NSMALL + NLARGE)
/* Fast lists: chunks up to 1 KiB freed and not coalesced (still marked in use), taken
 * back first by the next request of the same size, at most FAST_LIMIT per size. */
#define FAST_MAX 1024UL
#define NFAST (FAST_MAX / 16 + 1)
#define FAST_LIMIT 16

#define csize(c) ((c)->head & ~FLAGS)
#define at(c, off) ((struct chunk *)((char *)(c) + (off)))
#define mem(c) ((void *)((char *)(c) + 16))
#define chunk_of(p) ((struct chunk *)((char *)(p)-16))

/* An in-use chunk of size s holds s - 8 bytes: it also uses the next chunk's prev_size. */
static inline size_t request2size(size_t n) {
  size_t s = (n + 8 + 15) & ~15UL;
  return s < MINCHUNK ? MINCHUNK : s;
}

/* ---- arenas ---- */

struct arena {
  uint64_t magic;          /* CAPE_HEAP_ARENA_MAGIC ^ index (CAPE_HEAP_OFF_MAGIC) */
  char *committed_end;     /* CAPE_HEAP_OFF_COMMITTED_END */
  char *reserved_end;      /* CAPE_HEAP_OFF_RESERVED_END */
  uint32_t lock;           /* 0 free, 1 held: back to 0 after every call */
  uint32_t index;
  struct chunk *top;       /* the free space at the end: [top, committed_end) */
  char *fresh;             /* [fresh, committed_end) was never written: zeros */
  struct chunk *deferred;  /* other arenas' blocks freed here in a window */
  uint64_t smallmap;       /* bit i: small bin i not empty */
  uint64_t largemap[2];    /* bit i: large bin i not empty */
  uint32_t nodes;          /* arena 0: node arenas set up (1 .. nodes) */
  uint32_t fast_total;     /* chunks in the fast lists */
  size_t trim_threshold;
  struct cape_heap_stats st; /* in_use leaves out the fast lists' chunks */
  uint16_t fast_count[NFAST];
  struct chunk *fast[NFAST];
  struct chunk *bins[2 * NBINS]; /* fd, bk of each bin's list head */
};

#define HDR_SIZE ((sizeof(struct arena) + 15) & ~15UL)

_Static_assert(offsetof(struct arena, magic) == CAPE_HEAP_OFF_MAGIC, "protocol.h layout");
_Static_assert(offsetof(struct arena, committed_end) == CAPE_HEAP_OFF_COMMITTED_END, "protocol.h layout");
_Static_assert(offsetof(struct arena, reserved_end) == CAPE_HEAP_OFF_RESERVED_END, "protocol.h layout");
_Static_assert(HDR_SIZE + MINCHUNK <= NODE_INITIAL, "the header fits the first commit");

static inline uintptr_t arena_base(unsigned i) {
  return i == 0 ? CAPE_HEAP_BASE : CAPE_HEAP_NODE_BASE + (uintptr_t)(i - 1) * CAPE_HEAP_NODE_SPAN;
}
#define ARENA(i) ((struct arena *)arena_base(i))
#define A0 ARENA(0)

/* Process-wide: 0 not set up, 1 being set up, 2 ready (heap_arena.c). */
extern int cape_heap_state;

/* Per thread, never in tracked memory (heap_arena.c): whether this thread is in a window,
 * its node's arena, and whether a window has ended since the last settle. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
extern TLS int cape_heap_tls_in_window;
extern TLS struct arena *cape_heap_tls_own;
extern TLS int cape_heap_tls_settle_pending;

/* A bin's list head, as a chunk whose fd/bk are bins[2i], bins[2i+1]. */
static inline struct chunk *bin_at(struct arena *a, unsigned i) {
  return (struct chunk *)((char *)&a->bins[2 * i] - offsetof(struct chunk, fd));
}

static inline unsigned large_index(size_t s) {
  unsigned lg = 63 - (unsigned)__builtin_clzl(s);
  unsigned i = (lg - 10) * 4 + (unsigned)((s >> (lg - 2)) & 3);
  return i < NLARGE ? i : NLARGE - 1;
}

static inline unsigned bin_index(size_t s) {
  return s < SMALL_LIMIT ? (unsigned)(s >> 4) : NSMALL + large_index(s);
}

/* ---- locks: a word that returns to 0, so it leaves no change in a checkpoint ---- */

static inline int lock(struct arena *a) {
  if (__libc_single_threaded) return 0;
  unsigned spins = 0;
  while (__atomic_exchange_n(&a->lock, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&a->lock, __ATOMIC_RELAXED)) {
      if (++spins < 256) __builtin_ia32_pause();
      else sys3(SYS_sched_yield, 0, 0, 0);
    }
  }
  return 1;
}
static inline void unlock(struct arena *a, int held) {
  if (held) __atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
}

/* A fast chunk's bk holds this key, so a second free of it is caught (the list is walked
 * only when the key matches, which a block in use holds only by a wild coincidence). */
static inline struct chunk *fast_key(struct arena *a) { return (struct chunk *)((uintptr_t)a ^ 0x66617374UL); }

/* Before constructors may already be too late (ld.so and libc allocate first): every
 * entry point also calls ready(). */
static inline void ready(void) {
  if (__builtin_expect(__atomic_load_n(&cape_heap_state, __ATOMIC_ACQUIRE) != 2, 0)) cape_heap_init();
}

/* ---- the arenas (heap_arena.c) ---- */

int cape_heap_grow(struct arena *a, size_t need);  /* commits >= need more bytes at the top */
void cape_heap_trim(struct arena *a, size_t keep); /* gives the top beyond keep back */
void cape_heap_settle_deferred(void);              /* every node arena's deferred frees */

static inline void maybe_trim(struct arena *a) {
  if (!cape_heap_tls_in_window && (size_t)(a->committed_end - (char *)a->top) > a->trim_threshold)
    cape_heap_trim(a, TRIM_KEEP);
}

/* ---- the chunk allocator inside one arena, its lock held (heap_chunk.c) ---- */

/* From the bins or the top; *clean (when asked) = the address from which the block is
 * known to hold zeros (never written since it was committed). */
void *cape_heap_alloc_core(struct arena *a, size_t nb, char **clean);
/* A chunk of nb bytes carved from the top. */
void *cape_heap_from_top(struct arena *a, size_t nb, char **clean);
/* A chunk of nb bytes whose memory is aligned to `align` (a power of two > 16). */
void *cape_heap_alloc_aligned(struct arena *a, size_t align, size_t nb, char **clean);
/* Frees in-use chunk c of arena a: coalesces with free neighbours or the top. */
void cape_heap_release(struct arena *a, struct chunk *c);
/* Coalesces every chunk of the fast lists. */
void cape_heap_flush_fast(struct arena *a);
/* Grows in-use chunk c in place to nb bytes when its next chunk is free or the top. */
int cape_heap_grow_in_place(struct arena *a, struct chunk *c, size_t nb);

/* A chunk of nb bytes, from its fast list first. */
static inline void *alloc(struct arena *a, size_t nb, char **clean) {
  struct chunk *c;
  if (nb <= FAST_MAX && (c = a->fast[nb >> 4])) {
    a->fast[nb >> 4] = c->fd;
    a->fast_count[nb >> 4]--;
    a->fast_total--;
    c->bk = 0;
    a->st.in_use += nb;
    a->st.mallocs++;
    if (clean) *clean = (char *)c + nb + 8;
    return mem(c);
  }
  return cape_heap_alloc_core(a, nb, clean);
}

/* Frees in-use chunk c of arena a: onto its fast list when it is small and the list short,
 * else coalesced. */
static inline void give_back(struct arena *a, struct chunk *c) {
  size_t s = csize(c);
  if (s <= FAST_MAX && a->fast_count[s >> 4] < FAST_LIMIT && !(c->head & MAPPED)) {
    c->fd = a->fast[s >> 4];
    c->bk = fast_key(a);
    a->fast[s >> 4] = c;
    a->fast_count[s >> 4]++;
    a->fast_total++;
    a->st.in_use -= s;
  } else {
    cape_heap_release(a, c);
  }
  a->st.frees++;
}

/* Shrinks in-use chunk c (arena a) to nb bytes, freeing the rest; nb <= csize(c). */
static inline void shrink(struct arena *a, struct chunk *c, size_t nb) {
  size_t s = csize(c);
  if (s - nb < MINCHUNK) return;
  struct chunk *r = at(c, nb);
  c->head = nb | (c->head & FLAGS);
  r->head = (s - nb) | PINUSE | CINUSE; /* counted in c's in_use until released */
  cape_heap_release(a, r);
}

/* ---- which arena a pointer belongs to ---- */

static inline int in_heap(uintptr_t p) { return p - CAPE_HEAP_BASE < CAPE_HEAP_END - CAPE_HEAP_BASE; }

/* The arena of p, which lies in the cape heap's range; aborts when it is in no arena. */
static inline __attribute__((always_inline)) struct arena *arena_of(uintptr_t p, const char *call) {
  unsigned i = 0;
  if (p >= CAPE_HEAP_NODE_BASE) {
    i = 1 + (unsigned)((p - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN);
    if (i > A0->nodes) cape_heap_fail(call, (void *)p, "not a block of the cape heap (no arena there)");
  }
  struct arena *a = ARENA(i);
  if (p >= (uintptr_t)a->committed_end) cape_heap_fail(call, (void *)p, "not a block of the cape heap");
  return a;
}

/* A chunk freed onto a fast list is still marked in use; its key says it may be there. */
static inline int in_fast_list(struct arena *a, struct chunk *c) {
  size_t s = csize(c);
  if (s > FAST_MAX) return 0;
  for (struct chunk *f = a->fast[s >> 4]; f; f = f->fd)
    if (f == c) return 1;
  return 0;
}

/* The in-use chunk of p in arena a, checked: a bad pointer or a double free aborts. */
static inline __attribute__((always_inline)) struct chunk *checked(struct arena *a, void *p, const char *call) {
  struct chunk *c = chunk_of(p);
  if (((uintptr_t)p & 15) || (char *)c < (char *)a + HDR_SIZE || c >= a->top)
    cape_heap_fail(call, p, "not a block of the cape heap");
  size_t h = c->head, s = h & ~FLAGS;
  if (!(h & CINUSE)) cape_heap_fail(call, p, "block not in use (freed twice?)");
  if (s < MINCHUNK || (char *)c + s > (char *)a->top || !(at(c, s)->head & PINUSE))
    cape_heap_fail(call, p, "corrupted cape heap: bad block header");
  if (__builtin_expect(c->bk == fast_key(a), 0) && in_fast_list(a, c))
    cape_heap_fail(call, p, "block not in use (freed twice?)");
  return c;
}

/* ---- allocating and freeing from the entry points (heap_api.c, heap_mmap.c) ---- */

/* The arena this thread allocates from now; outside windows, first the deferred frees. */
static inline struct arena *current(void) {
  ready();
  if (cape_heap_tls_in_window) return cape_heap_tls_own;
  if (__builtin_expect(cape_heap_tls_settle_pending, 0)) cape_heap_settle_deferred();
  return A0;
}

static inline __attribute__((always_inline)) void *allocate(size_t n, size_t align, char **clean) {
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  struct arena *a = current();
  size_t nb = request2size(n);
  int h = lock(a);
  void *p = align <= 16 ? alloc(a, nb, clean) : cape_heap_alloc_aligned(a, align, nb, clean);
  unlock(a, h);
  if (!p) errno = ENOMEM;
  return p;
}

/* free() of a pointer outside the cape heap's range is ignored: ld.so hands out a few blocks
 * from its own minimal allocator before malloc is bound to this one, and may free them with
 * free(). A pointer inside the range that is not a block in use aborts (cape_heap_fail). */
static inline __attribute__((always_inline)) void free_block(void *p, const char *call) {
  struct arena *a = arena_of((uintptr_t)p, call);
  if (cape_heap_tls_in_window && a != cape_heap_tls_own) {
    /* Another arena's block inside a window: its arena is not ours to write. */
    struct arena *own = cape_heap_tls_own;
    checked(a, p, call);
    int h = lock(own);
    struct chunk *c = chunk_of(p);
    c->fd = own->deferred;
    own->deferred = c;
    own->st.deferred++;
    unlock(own, h);
    return;
  }
  if (!cape_heap_tls_in_window && cape_heap_tls_settle_pending) cape_heap_settle_deferred();
  int h = lock(a);
  give_back(a, checked(a, p, call));
  unlock(a, h);
}

#pragma GCC visibility pop

#endif /* CAPE_HEAP_INTERNAL_H */
