/* The cape heap's chunk allocator: allocating and freeing inside one arena, its lock held
 * (docs/monitor.md "The cape heap"; the whole design is in heap_internal.h).
 *
 * Each arena is a boundary-tag allocator in the manner of dlmalloc (Doug Lea's design:
 * 16-byte aligned chunks, size and in-use bits in a header word, the size repeated at the
 * end of a free chunk, coalescing): exact-size lists for chunks below 1 KiB, lists of 4 size
 * classes per power of two above, bitmaps to find a non-empty list, LIFO "fast lists" of up
 * to 16 freed chunks per size up to 1 KiB that are reused before they are coalesced (as
 * glibc's tcache and fastbins), and the "top": the free space at the end of the committed
 * part (grown and trimmed by heap_arena.c). The fast lists' own paths (alloc, give_back) are
 * inline in heap_internal.h, for malloc and free.
 */
#define _GNU_SOURCE
#include "heap_internal.h"

/* ---- bins ---- */

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
  if (__builtin_expect(f->bk != c || b->fd != c, 0)) cape_heap_fail("free list", c, "corrupted free list in the cape heap");
  f->bk = b;
  b->fd = f;
  if (f == b) { /* the list holds only its head now */
    unsigned i = bin_index(csize(c));
    if (f == bin_at(a, i)) unmark(a, i);
  }
}

/* ---- allocating ---- */

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

/* The top always keeps room for its own header. */
void *cape_heap_from_top(struct arena *a, size_t nb, char **clean) {
  size_t ts = (size_t)(a->committed_end - (char *)a->top);
  if (ts < nb + MINCHUNK && !cape_heap_grow(a, nb + MINCHUNK - ts)) return 0;
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

/* The chunk's previous chunk is in use (PINUSE). */
void *cape_heap_alloc_core(struct arena *a, size_t nb, char **clean) {
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
    cape_heap_flush_fast(a);
    goto retry;
  }
  return cape_heap_from_top(a, nb, clean);
}

/* ---- freeing ---- */

void cape_heap_release(struct arena *a, struct chunk *c) {
  size_t s = csize(c);
  a->st.in_use -= s;
  c->head &= ~CINUSE; /* even when merged below: a second free of it is seen as one */
  if (!(c->head & PINUSE)) {
    size_t ps = c->prev_size;
    struct chunk *p = at(c, -(ptrdiff_t)ps);
    if (__builtin_expect(csize(p) != ps || (p->head & CINUSE), 0))
      cape_heap_fail("free", mem(c), "corrupted cape heap: the previous block's size does not match");
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

void cape_heap_flush_fast(struct arena *a) {
  for (unsigned i = 0; i < NFAST; i++) {
    struct chunk *c = a->fast[i];
    a->fast[i] = 0;
    a->fast_count[i] = 0;
    while (c) {
      struct chunk *next = c->fd;
      c->bk = 0;
      a->st.in_use += csize(c);
      cape_heap_release(a, c);
      c = next;
    }
  }
  a->fast_total = 0;
}

/* ---- resizing and aligning ---- */

int cape_heap_grow_in_place(struct arena *a, struct chunk *c, size_t nb) {
  size_t s = csize(c);
  struct chunk *n = at(c, s);
  if (n == a->top) {
    size_t ts = (size_t)(a->committed_end - (char *)n);
    if (s + ts < nb + MINCHUNK) {
      if (!cape_heap_grow(a, nb + MINCHUNK - s - ts)) return 0;
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

void *cape_heap_alloc_aligned(struct arena *a, size_t align, size_t nb, char **clean) {
  char *cl;
  void *m = cape_heap_alloc_core(a, nb + align + MINCHUNK, &cl); /* its previous chunk is in use */
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
