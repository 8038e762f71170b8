/* The cape heap: malloc and friends, and anonymous mmap, served from arenas at fixed
 * addresses in the program's tracked memory (docs/monitor.md "The heap and stdio").
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
 * Inside a window a node touches only its own arena's words (and the blocks it writes), so
 * two nodes allocating at once never write the same word. A free inside a window of a block
 * that belongs to another arena is deferred: the block is pushed on a list in the node's own
 * arena (linked through the block's first word) and freed for real by settle(), which runs
 * where every node holds the same memory (before cape_start()'s trap, and at the first
 * allocator call after a window), so every node frees the same blocks in the same order.
 *
 * Each arena is a boundary-tag allocator in the manner of dlmalloc (Doug Lea's design:
 * 16-byte aligned chunks, size and in-use bits in a header word, the size repeated at the
 * end of a free chunk, coalescing): exact-size lists for chunks below 1 KiB, lists of 4 size
 * classes per power of two above, bitmaps to find a non-empty list, LIFO "fast lists" of up
 * to 16 freed chunks per size up to 1 KiB that are reused before they are coalesced (as
 * glibc's tcache and fastbins), and the "top": the free space at the end of the committed
 * part, grown by mprotect in steps of 1/16 of the arena (64 KiB .. 64 MiB). Memory goes back
 * to the kernel (the top beyond 512 KiB, once it exceeds the trim threshold) only outside
 * windows, where every node does the same.
 */
#define _GNU_SOURCE
#include "heap.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>

#include "protocol.h"

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

/* ---- failure ---- */

static void put(char **o, const char *s) {
  while (*s) *(*o)++ = *s++;
}

/* Writes "cape heap: CALL(PTR): WHAT" on stderr and aborts: a corrupted heap or a bad
 * pointer must stop the program, not spread to other nodes. */
__attribute__((noreturn, cold, noinline)) static void heap_fail(const char *call, const void *p,
                                                                const char *what) {
  char buf[320], *o = buf;
  put(&o, "cape heap: ");
  put(&o, call);
  put(&o, "(0x");
  uintptr_t v = (uintptr_t)p;
  char hex[17];
  int n = 0;
  do {
    hex[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  while (n) *o++ = hex[--n];
  put(&o, "): ");
  size_t room = (size_t)(buf + sizeof buf - 2 - o), len = strlen(what);
  memcpy(o, what, len < room ? len : room);
  o += len < room ? len : room;
  *o++ = '\n';
  sys3(SYS_write, 2, buf, o - buf);
  abort();
}

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

/* Process-wide: 0 not set up, 1 being set up, 2 ready. In the executable's .bss, so it is
 * tracked, but written once before the first allocation, the same way on every node. */
static int heap_state;

/* Per thread, never in tracked memory (the main thread's static TLS is not tracked,
 * docs/monitor.md): whether this thread is in a window, its node's arena, and whether a
 * window has ended since the last settle. */
#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int in_window;
static TLS struct arena *own;
static TLS int settle_pending;

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

static inline void mark(struct arena *a, unsigned i) {
  if (i < NSMALL) a->smallmap |= 1UL << i;
  else a->largemap[(i - NSMALL) >> 6] |= 1UL << ((i - NSMALL) & 63);
}
static inline void unmark(struct arena *a, unsigned i) {
  if (i < NSMALL) a->smallmap &= ~(1UL << i);
  else a->largemap[(i - NSMALL) >> 6] &= ~(1UL << ((i - NSMALL) & 63));
}

static inline void insert(struct arena *a, struct chunk *c, size_t s) {
  unsigned i = bin_index(s);
  struct chunk *b = bin_at(a, i), *f = b->fd;
  c->fd = f;
  c->bk = b;
  f->bk = c;
  b->fd = c;
  mark(a, i);
}

static inline void unlink_chunk(struct arena *a, struct chunk *c) {
  struct chunk *f = c->fd, *b = c->bk;
  if (__builtin_expect(f->bk != c || b->fd != c, 0)) heap_fail("free list", c, "corrupted free list in the cape heap");
  f->bk = b;
  b->fd = f;
  if (f == b) { /* the list holds only its head now */
    unsigned i = bin_index(csize(c));
    if (f == bin_at(a, i)) unmark(a, i);
  }
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

/* ---- fast lists ---- */

/* A fast chunk's bk holds this key, so a second free of it is caught (the list is walked
 * only when the key matches, which a block in use holds only by a wild coincidence). */
static inline struct chunk *fast_key(struct arena *a) { return (struct chunk *)((uintptr_t)a ^ 0x66617374UL); }

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
    heap_fail("reserve", (void *)base,
              r == -EEXIST ? "the cape heap's address range is already mapped (docs/monitor.md)"
                           : "cannot reserve the cape heap's address range");
  }
  size_t initial = i == 0 ? ARENA0_INITIAL : NODE_INITIAL;
  if (sys3(SYS_mprotect, base, initial, PROT_READ | PROT_WRITE) != 0)
    heap_fail("reserve", (void *)base, "cannot commit the first pages of a cape heap arena");
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
  if (__atomic_load_n(&heap_state, __ATOMIC_ACQUIRE) == 2) return;
  int expected = 0;
  if (__atomic_compare_exchange_n(&heap_state, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
    setup_arena(0);
    __atomic_store_n(&heap_state, 2, __ATOMIC_RELEASE);
    return;
  }
  while (__atomic_load_n(&heap_state, __ATOMIC_ACQUIRE) != 2) sys3(SYS_sched_yield, 0, 0, 0);
}

/* Before constructors may already be too late (ld.so and libc allocate first): every
 * entry point also calls ready(). */
__attribute__((constructor(101))) static void heap_constructor(void) { cape_heap_init(); }

static inline void ready(void) {
  if (__builtin_expect(__atomic_load_n(&heap_state, __ATOMIC_ACQUIRE) != 2, 0)) cape_heap_init();
}

/* ---- growing and trimming ---- */

/* Commits at least `need` more bytes at the top (mprotect of the next part of the
 * reservation). Inside a window this changes this node's mappings only; the monitor replays
 * the mprotect on the other nodes before it writes the data (docs/monitor.md). */
static int grow(struct arena *a, size_t need) {
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

/* Gives the top beyond TRIM_KEEP back to the kernel (a fresh PROT_NONE reservation over
 * it: the pages are dropped). Only outside windows, where every node does the same: inside
 * one, a node dropping pages would change bytes no tracker sees. */
static void trim(struct arena *a, size_t keep) {
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

static inline void maybe_trim(struct arena *a) {
  if (!in_window && (size_t)(a->committed_end - (char *)a->top) > a->trim_threshold) trim(a, TRIM_KEEP);
}

/* ---- allocating and freeing inside one arena (its lock held) ---- */

/* Splits free chunk c (unlinked) to nb bytes in use; the rest goes back to a bin. */
static inline void *use(struct arena *a, struct chunk *c, size_t nb) {
  size_t s = csize(c);
  if (s - nb >= MINCHUNK) {
    struct chunk *r = at(c, nb);
    r->head = (s - nb) | PINUSE;
    at(r, s - nb)->prev_size = s - nb;
    insert(a, r, s - nb);
    c->head = nb | PINUSE | CINUSE;
  } else {
    c->head = s | PINUSE | CINUSE;
    at(c, s)->head |= PINUSE;
    nb = s;
  }
  a->st.in_use += nb;
  a->st.mallocs++;
  return mem(c);
}

static void flush_fast(struct arena *a);

/* A chunk of nb bytes carved from the top, which always keeps room for its own header. */
static void *from_top(struct arena *a, size_t nb, char **clean) {
  size_t ts = (size_t)(a->committed_end - (char *)a->top);
  if (ts < nb + MINCHUNK && !grow(a, nb + MINCHUNK - ts)) return 0;
  struct chunk *c = a->top;
  ts = (size_t)(a->committed_end - (char *)c);
  struct chunk *t = at(c, nb);
  if (clean) *clean = a->fresh > (char *)mem(c) ? a->fresh : (char *)mem(c);
  c->head = nb | PINUSE | CINUSE;
  t->head = (ts - nb) | PINUSE;
  a->top = t;
  if (a->fresh < (char *)t + 16) a->fresh = (char *)t + 16;
  a->st.in_use += nb;
  a->st.mallocs++;
  return mem(c);
}

/* From the bins or the top: the chunk's previous chunk is in use (PINUSE). */
static void *alloc_core(struct arena *a, size_t nb, char **clean) {
  struct chunk *c;
retry:
  c = 0;
  if (nb < SMALL_LIMIT) {
    unsigned i = (unsigned)(nb >> 4);
    uint64_t bits = a->smallmap >> i;
    if (bits) {
      struct chunk *b = bin_at(a, i + (unsigned)__builtin_ctzl(bits));
      c = b->fd;
      unlink_chunk(a, c);
    }
  }
  if (!c) {
    /* Large: the best fit among the first chunks of nb's own bin, else the first chunk of
     * the next non-empty bin (every chunk there is larger than nb). */
    unsigned i = 0;
    if (nb >= SMALL_LIMIT) {
      i = large_index(nb);
      struct chunk *b = bin_at(a, NSMALL + i), *best = 0;
      unsigned n = 0;
      for (struct chunk *p = b->fd; p != b && n < LARGE_SCAN; p = p->fd, n++) {
        size_t s = csize(p);
        if (s >= nb && (!best || s < csize(best))) {
          best = p;
          if (s == nb) break;
        }
      }
      if (best) c = best;
      else i++;
    }
    for (unsigned w = i >> 6; !c && w < 2; w++) {
      uint64_t m = a->largemap[w];
      if (w == i >> 6) m &= ~0UL << (i & 63);
      if (m) c = bin_at(a, NSMALL + w * 64 + (unsigned)__builtin_ctzl(m))->fd;
    }
    if (c) unlink_chunk(a, c);
  }
  if (c) {
    if (clean) *clean = (char *)c + csize(c) + 8;
    return use(a, c, nb);
  }
  /* From the top; before it grows, the fast lists' chunks are coalesced, which may make
   * room. */
  if ((size_t)(a->committed_end - (char *)a->top) < nb + MINCHUNK && a->fast_total) {
    flush_fast(a);
    goto retry;
  }
  return from_top(a, nb, clean);
}

/* A chunk of nb bytes, from its fast list first; *clean (when asked) = the address from
 * which the block is known to hold zeros (never written since it was committed). */
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
  return alloc_core(a, nb, clean);
}

/* Frees in-use chunk c of arena a: coalesces with free neighbours or the top. */
static void release(struct arena *a, struct chunk *c) {
  size_t s = csize(c);
  a->st.in_use -= s;
  c->head &= ~CINUSE; /* even when merged below: a second free of it is seen as one */
  if (!(c->head & PINUSE)) {
    size_t ps = c->prev_size;
    struct chunk *p = at(c, -(ptrdiff_t)ps);
    if (__builtin_expect(csize(p) != ps || (p->head & CINUSE), 0))
      heap_fail("free", mem(c), "corrupted cape heap: the previous block's size does not match");
    unlink_chunk(a, p);
    c = p;
    s += ps;
  }
  struct chunk *n = at(c, s);
  if (n == a->top) {
    size_t total = s + (size_t)(a->committed_end - (char *)n);
    c->head = total | PINUSE;
    a->top = c;
    if (s > a->trim_threshold / 2) {
      size_t t = 2 * s < TRIM_MAX ? 2 * s : TRIM_MAX;
      if (t > a->trim_threshold) a->trim_threshold = t;
    }
    maybe_trim(a);
    return;
  }
  if (!(n->head & CINUSE)) {
    unlink_chunk(a, n);
    s += csize(n);
  } else {
    n->head &= ~PINUSE;
  }
  c->head = s | PINUSE;
  at(c, s)->prev_size = s;
  insert(a, c, s);
}

/* Coalesces every chunk of the fast lists. */
static void flush_fast(struct arena *a) {
  for (unsigned i = 0; i < NFAST; i++) {
    struct chunk *c = a->fast[i];
    a->fast[i] = 0;
    a->fast_count[i] = 0;
    while (c) {
      struct chunk *next = c->fd;
      c->bk = 0;
      a->st.in_use += csize(c);
      release(a, c);
      c = next;
    }
  }
  a->fast_total = 0;
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
    release(a, c);
  }
  a->st.frees++;
}

/* Shrinks in-use chunk c (arena a) to nb bytes, freeing the rest; nb <= csize(c). */
static void shrink(struct arena *a, struct chunk *c, size_t nb) {
  size_t s = csize(c);
  if (s - nb < MINCHUNK) return;
  struct chunk *r = at(c, nb);
  c->head = nb | (c->head & FLAGS);
  r->head = (s - nb) | PINUSE | CINUSE; /* counted in c's in_use until released */
  release(a, r);
}

/* Grows in-use chunk c in place to nb bytes when its next chunk is free or the top. */
static int grow_in_place(struct arena *a, struct chunk *c, size_t nb) {
  size_t s = csize(c);
  struct chunk *n = at(c, s);
  if (n == a->top) {
    size_t ts = (size_t)(a->committed_end - (char *)n);
    if (s + ts < nb + MINCHUNK) {
      if (!grow(a, nb + MINCHUNK - s - ts)) return 0;
      ts = (size_t)(a->committed_end - (char *)n);
    }
    struct chunk *t = at(c, nb);
    c->head = nb | (c->head & FLAGS);
    t->head = (s + ts - nb) | PINUSE;
    a->top = t;
    if (a->fresh < (char *)t + 16) a->fresh = (char *)t + 16;
    a->st.in_use += nb - s;
    return 1;
  }
  if (n->head & CINUSE) return 0;
  size_t ns = csize(n);
  if (s + ns < nb) return 0;
  unlink_chunk(a, n);
  c->head = (s + ns) | (c->head & FLAGS);
  at(c, s + ns)->head |= PINUSE;
  a->st.in_use += ns;
  shrink(a, c, nb);
  return 1;
}

/* A chunk of nb bytes whose memory is aligned to `align` (a power of two > 16). */
static void *alloc_aligned(struct arena *a, size_t align, size_t nb, char **clean) {
  char *cl;
  void *m = alloc_core(a, nb + align + MINCHUNK, &cl); /* its previous chunk is in use */
  if (!m) return 0;
  struct chunk *c = chunk_of(m);
  if ((uintptr_t)m & (align - 1)) {
    char *q = (char *)((((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1)) - 16);
    if ((size_t)(q - (char *)c) < MINCHUNK) q += align;
    size_t lead = (size_t)(q - (char *)c), s = csize(c);
    struct chunk *qc = (struct chunk *)q;
    qc->head = (s - lead) | CINUSE; /* previous (the lead) is free */
    qc->prev_size = lead;
    c->head = lead | PINUSE;        /* c's previous is in use: c came from a free chunk or the top */
    insert(a, c, lead);
    a->st.in_use -= lead;
    c = qc;
  }
  shrink(a, c, nb);
  if (clean) *clean = cl > (char *)mem(c) ? cl : (char *)mem(c);
  return mem(c);
}

/* ---- which arena a pointer belongs to ---- */

static inline int in_heap(uintptr_t p) { return p - CAPE_HEAP_BASE < CAPE_HEAP_END - CAPE_HEAP_BASE; }

/* The arena of p, which lies in the cape heap's range; aborts when it is in no arena. */
static inline __attribute__((always_inline)) struct arena *arena_of(uintptr_t p, const char *call) {
  unsigned i = 0;
  if (p >= CAPE_HEAP_NODE_BASE) {
    i = 1 + (unsigned)((p - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN);
    if (i > A0->nodes) heap_fail(call, (void *)p, "not a block of the cape heap (no arena there)");
  }
  struct arena *a = ARENA(i);
  if (p >= (uintptr_t)a->committed_end) heap_fail(call, (void *)p, "not a block of the cape heap");
  return a;
}

/* A chunk freed onto a fast list is still marked in use; its key says it may be there. */
static int in_fast_list(struct arena *a, struct chunk *c) {
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
    heap_fail(call, p, "not a block of the cape heap");
  size_t h = c->head, s = h & ~FLAGS;
  if (!(h & CINUSE)) heap_fail(call, p, "block not in use (freed twice?)");
  if (s < MINCHUNK || (char *)c + s > (char *)a->top || !(at(c, s)->head & PINUSE))
    heap_fail(call, p, "corrupted cape heap: bad block header");
  if (__builtin_expect(c->bk == fast_key(a), 0) && in_fast_list(a, c))
    heap_fail(call, p, "block not in use (freed twice?)");
  return c;
}

/* ---- windows ---- */

/* Every deferred free of every node arena, in arena order: the same on every node. */
static void settle(void) {
  settle_pending = 0;
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
      release(a, checked(a, mem(list), "free (deferred)"));
      a->st.frees++;
      unlock(a, ha);
      list = next;
    }
  }
}

void cape_heap_settle(int nodes) {
  ready();
  if (in_window) return; /* cape_start() twice without cape_stop(): nothing is settled inside */
  if (nodes > CAPE_HEAP_MAX_NODES) heap_fail("cape_start", 0, "more nodes than the cape heap has arenas (256)");
  int h = lock(A0);
  while ((int)A0->nodes < nodes) {
    setup_arena(A0->nodes + 1);
    A0->nodes++;
  }
  unlock(A0, h);
  settle();
}

void cape_heap_enter(int rank) {
  ready();
  if (rank < 0 || rank >= (int)A0->nodes)
    heap_fail("cape_start", 0, "window entered for a node whose arena is not set up (cape_heap_settle)");
  own = ARENA(1 + (unsigned)rank);
  in_window = 1;
}

void cape_heap_leave(void) {
  if (!in_window) return;
  in_window = 0;
  own = 0;
  settle_pending = 1;
}

int cape_heap_in_window(void) { return in_window; }

/* The arena this thread allocates from now; outside windows, first the deferred frees. */
static inline struct arena *current(void) {
  ready();
  if (in_window) return own;
  if (__builtin_expect(settle_pending, 0)) settle();
  return A0;
}

/* ---- the C library's allocator interface ---- */

static inline __attribute__((always_inline)) void *allocate(size_t n, size_t align, char **clean) {
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  struct arena *a = current();
  size_t nb = request2size(n);
  int h = lock(a);
  void *p = align <= 16 ? alloc(a, nb, clean) : alloc_aligned(a, align, nb, clean);
  unlock(a, h);
  if (!p) errno = ENOMEM;
  return p;
}

void *malloc(size_t n) { return allocate(n, 16, 0); }

void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return 0;
  }
  char *clean;
  char *p = allocate(total, 16, &clean);
  if (p && clean > p) memset(p, 0, (size_t)(clean - p) < total ? (size_t)(clean - p) : total);
  return p;
}

/* free() of a pointer outside the cape heap's range is ignored: ld.so hands out a few blocks
 * from its own minimal allocator before malloc is bound to this one, and may free them with
 * free(). A pointer inside the range that is not a block in use aborts (heap_fail). */
static inline __attribute__((always_inline)) void free_block(void *p, const char *call) {
  struct arena *a = arena_of((uintptr_t)p, call);
  if (in_window && a != own) {
    /* Another arena's block inside a window: its arena is not ours to write. */
    checked(a, p, call);
    int h = lock(own);
    struct chunk *c = chunk_of(p);
    c->fd = own->deferred;
    own->deferred = c;
    own->st.deferred++;
    unlock(own, h);
    return;
  }
  if (!in_window && settle_pending) settle();
  int h = lock(a);
  give_back(a, checked(a, p, call));
  unlock(a, h);
}

void free(void *p) {
  if (!p || !in_heap((uintptr_t)p)) return;
  ready();
  free_block(p, "free");
}

void *realloc(void *p, size_t n) {
  if (!p) return malloc(n);
  if (!in_heap((uintptr_t)p)) heap_fail("realloc", p, "not a block of the cape heap (its size is unknown)");
  if (n == 0) { /* glibc's behaviour */
    free(p);
    return 0;
  }
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  ready();
  struct arena *a = arena_of((uintptr_t)p, "realloc");
  struct arena *cur = current();
  size_t nb = request2size(n);
  if (!in_window || a == own) {
    int h = lock(a);
    struct chunk *c = checked(a, p, "realloc");
    int done = 1;
    if (nb <= csize(c)) shrink(a, c, nb);
    else done = grow_in_place(a, c, nb);
    unlock(a, h);
    if (done) return p;
  } else if (nb <= csize(checked(a, p, "realloc"))) {
    return p; /* another arena's block inside a window: left as it is when it fits */
  }
  size_t old = csize(chunk_of(p)) - 8;
  int h = lock(cur);
  /* A large block that moves goes to the top, where it can grow again in place (a block
   * grown step by step would otherwise be copied at every step). */
  void *q = nb >= REALLOC_TOP ? from_top(cur, nb, 0) : alloc(cur, nb, 0);
  unlock(cur, h);
  if (!q) {
    errno = ENOMEM;
    return 0;
  }
  memcpy(q, p, old < n ? old : n);
  free_block(p, "realloc");
  return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return 0;
  }
  return realloc(p, total);
}

static void *aligned(size_t align, size_t n) {
  if (align <= 16) return malloc(n);
  if (align > ((size_t)1 << 40)) {
    errno = EINVAL;
    return 0;
  }
  if (align & (align - 1)) align = (size_t)1 << (64 - __builtin_clzl(align)); /* as glibc */
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  return allocate(n, align, 0);
}

void *memalign(size_t align, size_t n) { return aligned(align, n); }
void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
void *valloc(size_t n) { return aligned(PAGE, n); }
void *pvalloc(size_t n) {
  size_t r = (n + PAGE - 1) & ~(PAGE - 1);
  if (r < n) {
    errno = ENOMEM;
    return 0;
  }
  return aligned(PAGE, r ? r : PAGE);
}

int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  int saved = errno;
  void *p = aligned(align, n);
  int err = p ? 0 : errno;
  errno = saved;
  if (!p) return err;
  *out = p;
  return 0;
}

size_t malloc_usable_size(void *p) {
  if (!p || !in_heap((uintptr_t)p)) return 0;
  ready();
  struct arena *a = arena_of((uintptr_t)p, "malloc_usable_size");
  return csize(checked(a, p, "malloc_usable_size")) - 8;
}

int malloc_trim(size_t pad) {
  ready();
  if (in_window) return 0;
  if (settle_pending) settle();
  int released = 0;
  for (unsigned i = 0; i <= A0->nodes; i++) {
    struct arena *a = ARENA(i);
    int h = lock(a);
    size_t before = a->st.trims;
    flush_fast(a);
    trim(a, pad);
    released |= a->st.trims != before;
    unlock(a, h);
  }
  return released;
}

/* ---- anonymous mmap served from the heap ---- */

/* Private anonymous read-write mappings the kernel would place anywhere: the heap can
 * place them instead, page aligned and zeroed. Everything else is the kernel's. */
static int servable(void *addr, size_t len, int prot, int flags) {
  const int refused = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN | MAP_HUGETLB | MAP_STACK |
                      MAP_32BIT | MAP_NORESERVE;
  return !addr && len && prot == (PROT_READ | PROT_WRITE) && (flags & MAP_ANONYMOUS) &&
         (flags & MAP_TYPE) == MAP_PRIVATE && !(flags & refused);
}

static inline size_t page_up(size_t n) { return (n + PAGE - 1) & ~(PAGE - 1); }
static inline void set_cookie(struct chunk *c);

static void *kernel_result(long r) {
  if (r < 0 && r > -4096) {
    errno = (int)-r;
    return MAP_FAILED;
  }
  return (void *)r;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (!servable(addr, len, prot, flags) || len >= MAX_REQUEST)
    return kernel_result(sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off));
  size_t n = page_up(len);
  char *clean;
  char *p = allocate(n, PAGE, &clean);
  if (!p) return MAP_FAILED; /* errno = ENOMEM, as the kernel says */
  chunk_of(p)->head |= MAPPED;
  set_cookie(chunk_of(p));
  if (clean > p) memset(p, 0, (size_t)(clean - p) < n ? (size_t)(clean - p) : n);
  return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

/* A block from mmap() ends with a cookie in its last word (the next chunk's prev_size,
 * beyond the pages the program was given), so a page of the program's own data that
 * happens to look like a chunk header is not taken for one. */
#define MAP_COOKIE 0x6d6d61702d636170ULL
static inline void set_cookie(struct chunk *c) {
  at(c, csize(c))->prev_size = (uintptr_t)c ^ csize(c) ^ MAP_COOKIE;
}

/* The block from mmap() that starts at p, or 0. */
static struct chunk *mapped_block(struct arena *a, void *p) {
  struct chunk *c = chunk_of(p);
  if (((uintptr_t)p & (PAGE - 1)) || (char *)c < (char *)a + HDR_SIZE || c >= a->top) return 0;
  size_t s = csize(c);
  if ((c->head & (MAPPED | CINUSE)) != (MAPPED | CINUSE) || s < MINCHUNK || (char *)c + s > (char *)a->top ||
      !(at(c, s)->head & PINUSE) || at(c, s)->prev_size != ((uintptr_t)c ^ s ^ MAP_COOKIE))
    return 0;
  return c;
}

/* The whole pages of a block from mmap(): the length it was mapped with, rounded up. */
static inline size_t mapped_len(struct chunk *c) { return (csize(c) - 8) & ~(PAGE - 1); }

/* The arenas set up so far span [CAPE_HEAP_BASE, live_end()): arena 0, then the node
 * arenas in order. The rest of the cape heap's range is free for the program's own
 * MAP_FIXED mappings, which munmap and mremap leave to the kernel. */
static inline uintptr_t live_end(void) { return CAPE_HEAP_NODE_BASE + (uintptr_t)A0->nodes * CAPE_HEAP_NODE_SPAN; }

/* The arena whose committed part holds u (below live_end()), or 0: munmap and mremap of
 * reserved or unmapped addresses fail with EINVAL rather than abort. */
static struct arena *committed_arena(uintptr_t u) {
  unsigned i = u >= CAPE_HEAP_NODE_BASE ? 1 + (unsigned)((u - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN) : 0;
  struct arena *a = ARENA(i);
  return u < (uintptr_t)a->committed_end ? a : 0;
}

/* munmap of a whole block from mmap() frees it (deferred in a window when it is another
 * arena's). Any other page-aligned range inside an arena's committed part (part of a block,
 * a malloc'd block) is left as it is and munmap returns 0: the pages stay usable, and a
 * block whose head or tail was unmapped is never freed. A range reaching into the arenas
 * from outside, or in their reserved part, is refused (EINVAL). Everything else is the
 * kernel's. */
int munmap(void *addr, size_t len) {
  uintptr_t u = (uintptr_t)addr;
  ready();
  uintptr_t end = live_end();
  if (u >= end || u + len <= CAPE_HEAP_BASE || u + len < u) {
    long r = sys3(SYS_munmap, addr, len, 0);
    if (r < 0) {
      errno = (int)-r;
      return -1;
    }
    return 0;
  }
  struct arena *a = u < CAPE_HEAP_BASE ? 0 : committed_arena(u);
  if (!a || (u & (PAGE - 1)) || !len) {
    errno = EINVAL;
    return -1;
  }
  int h = lock(a);
  struct chunk *c = mapped_block(a, addr);
  unlock(a, h);
  if (c && page_up(len) >= mapped_len(c)) free_block(addr, "munmap");
  return 0;
}

/* mremap of a block from mmap(): grown in place when the next chunk is free, else moved
 * with MREMAP_MAYMOVE (new pages zeroed, as the kernel's); shrunk in place. MREMAP_FIXED and
 * MREMAP_DONTUNMAP are refused (EINVAL) for heap blocks. Other mappings: the kernel. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
  void *new_addr = 0;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_addr = va_arg(ap, void *);
    va_end(ap);
  }
  ready();
  if ((uintptr_t)old < CAPE_HEAP_BASE || (uintptr_t)old >= live_end())
    return kernel_result(sys6(SYS_mremap, (long)old, (long)old_len, (long)new_len, flags, (long)new_addr, 0));
  struct arena *a = committed_arena((uintptr_t)old);
  if (!a) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  int h = lock(a);
  struct chunk *c = mapped_block(a, old);
  unlock(a, h);
  if (!c || old != mem(c) || !new_len || (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP))) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  size_t have = mapped_len(c), want = page_up(new_len);
  size_t nb = request2size(want);
  if (want <= have) {
    if (!in_window || a == own) {
      h = lock(a);
      shrink(a, c, nb);
      set_cookie(c);
      unlock(a, h);
    }
    return old;
  }
  if (!in_window || a == own) {
    h = lock(a);
    char *fresh = a->fresh;
    int done = grow_in_place(a, c, nb);
    if (done) set_cookie(c);
    unlock(a, h);
    if (done) { /* the new pages read as zeros, as the kernel's would */
      char *z = (char *)old + have, *e = (char *)old + want, *clean = fresh > z ? fresh : z;
      memset(z, 0, (size_t)((clean < e ? clean : e) - z));
      return old;
    }
  }
  if (!(flags & MREMAP_MAYMOVE)) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void *q = mmap(0, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) return q;
  memcpy(q, old, have);
  free_block(old, "mremap");
  return q;
}

/* ---- for the tests and the benchmark ---- */

int cape_heap_stats(int i, struct cape_heap_stats *s) {
  ready();
  if (i < 0 || i > (int)A0->nodes) return -1;
  *s = ARENA((unsigned)i)->st;
  return 0;
}

int cape_heap_arena_of(const void *p) {
  uintptr_t u = (uintptr_t)p;
  if (!p || !in_heap(u) || (u & 15)) return -1;
  ready();
  unsigned i = u >= CAPE_HEAP_NODE_BASE ? 1 + (unsigned)((u - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN) : 0;
  if (i > A0->nodes) return -1;
  struct arena *a = ARENA(i);
  struct chunk *c = chunk_of(p);
  if ((char *)c < (char *)a + HDR_SIZE || c >= a->top || !(c->head & CINUSE)) return -1;
  if (c->bk == fast_key(a) && in_fast_list(a, c)) return -1;
  return (int)i;
}

static void check_arena(struct arena *a) {
  if (a->magic != (CAPE_HEAP_ARENA_MAGIC ^ a->index)) heap_fail("check", a, "bad arena magic");
  size_t nfree = 0, in_use = 0;
  int prev_free = 0;
  struct chunk *c = (struct chunk *)((char *)a + HDR_SIZE);
  while (c != a->top) {
    if ((char *)c > (char *)a->top) heap_fail("check", c, "chunks run past the top");
    size_t s = csize(c);
    if (s < MINCHUNK || (s & 15)) heap_fail("check", c, "bad chunk size");
    if (!!(c->head & PINUSE) == prev_free) heap_fail("check", c, "PINUSE disagrees with the previous chunk");
    if (c->head & CINUSE) {
      in_use += s;
      prev_free = 0;
    } else {
      if (prev_free) heap_fail("check", c, "two free chunks in a row");
      if (at(c, s)->prev_size != s) heap_fail("check", c, "free chunk's footer differs");
      unsigned i = bin_index(s);
      int found = 0;
      struct chunk *b = bin_at(a, i);
      for (struct chunk *p = b->fd; p != b; p = p->fd)
        if (p == c) { found = 1; break; }
      if (!found) heap_fail("check", c, "free chunk missing from its bin");
      nfree++;
      prev_free = 1;
    }
    c = at(c, s);
  }
  if (prev_free) heap_fail("check", c, "free chunk next to the top");
  if (!(a->top->head & PINUSE)) heap_fail("check", a->top, "top without PINUSE");
  if (csize(a->top) != (size_t)(a->committed_end - (char *)a->top)) heap_fail("check", a->top, "top size");
  if ((char *)a->top + 16 > a->fresh) heap_fail("check", a->top, "fresh below the top's header");
  size_t inbins = 0;
  for (unsigned i = 0; i < NBINS; i++) {
    struct chunk *b = bin_at(a, i);
    int nonempty = b->fd != b;
    int marked = i < NSMALL ? (int)((a->smallmap >> i) & 1) : (int)((a->largemap[(i - NSMALL) >> 6] >> ((i - NSMALL) & 63)) & 1);
    if (nonempty != marked) heap_fail("check", b, "bin bitmap disagrees with its list");
    for (struct chunk *p = b->fd; p != b; p = p->fd) {
      if (p->fd->bk != p) heap_fail("check", p, "broken bin list");
      if (bin_index(csize(p)) != i) heap_fail("check", p, "chunk in the wrong bin");
      inbins++;
    }
  }
  if (inbins != nfree) heap_fail("check", a, "bins hold chunks that are not free");
  size_t fast_bytes = 0, fast_n = 0;
  for (unsigned i = 0; i < NFAST; i++) {
    unsigned n = 0;
    for (struct chunk *f = a->fast[i]; f; f = f->fd, n++) {
      if ((char *)f < (char *)a + HDR_SIZE || f >= a->top || !(f->head & CINUSE) || csize(f) != (size_t)i * 16 ||
          f->bk != fast_key(a))
        heap_fail("check", f, "bad chunk in a fast list");
      fast_bytes += csize(f);
    }
    if (n != a->fast_count[i] || n > FAST_LIMIT) heap_fail("check", a, "fast list count differs");
    fast_n += n;
  }
  if (fast_n != a->fast_total) heap_fail("check", a, "fast list total differs");
  if (in_use != a->st.in_use + fast_bytes) heap_fail("check", a, "in-use byte count differs");
}

void cape_heap_check(void) {
  ready();
  for (unsigned i = 0; i <= A0->nodes; i++) {
    struct arena *a = ARENA(i);
    int h = lock(a);
    check_arena(a);
    unlock(a, h);
  }
}
