/* The cape heap's failure message, and what the tests and the benchmark ask of it (heap.h:
 * stats, the arena of a pointer, a walk of every arena). docs/monitor.md "The cape heap";
 * the whole design is in heap_internal.h.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "heap_internal.h"

/* ---- failure ---- */

static void put(char **o, const char *s) {
  while (*s) *(*o)++ = *s++;
}

/* Writes "cape heap: CALL(PTR): WHAT" on stderr and aborts: a corrupted heap or a bad
 * pointer must stop the program, not spread to other nodes. */
__attribute__((noreturn, cold, noinline)) void cape_heap_fail(const char *call, const void *p, const char *what) {
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
  if (a->magic != (CAPE_HEAP_ARENA_MAGIC ^ a->index)) cape_heap_fail("check", a, "bad arena magic");
  size_t nfree = 0, in_use = 0;
  int prev_free = 0;
  struct chunk *c = (struct chunk *)((char *)a + HDR_SIZE);
  while (c != a->top) {
    if ((char *)c > (char *)a->top) cape_heap_fail("check", c, "chunks run past the top");
    size_t s = csize(c);
    if (s < MINCHUNK || (s & 15)) cape_heap_fail("check", c, "bad chunk size");
    if (!!(c->head & PINUSE) == prev_free) cape_heap_fail("check", c, "PINUSE disagrees with the previous chunk");
    if (c->head & CINUSE) {
      in_use += s;
      prev_free = 0;
    } else {
      if (prev_free) cape_heap_fail("check", c, "two free chunks in a row");
      if (at(c, s)->prev_size != s) cape_heap_fail("check", c, "free chunk's footer differs");
      unsigned i = bin_index(s);
      int found = 0;
      struct chunk *b = bin_at(a, i);
      for (struct chunk *p = b->fd; p != b; p = p->fd)
        if (p == c) { found = 1; break; }
      if (!found) cape_heap_fail("check", c, "free chunk missing from its bin");
      nfree++;
      prev_free = 1;
    }
    c = at(c, s);
  }
  if (prev_free) cape_heap_fail("check", c, "free chunk next to the top");
  if (!(a->top->head & PINUSE)) cape_heap_fail("check", a->top, "top without PINUSE");
  if (csize(a->top) != (size_t)(a->committed_end - (char *)a->top)) cape_heap_fail("check", a->top, "top size");
  if ((char *)a->top + 16 > a->fresh) cape_heap_fail("check", a->top, "fresh below the top's header");
  size_t inbins = 0;
  for (unsigned i = 0; i < NBINS; i++) {
    struct chunk *b = bin_at(a, i);
    int nonempty = b->fd != b;
    int marked = i < NSMALL ? (int)((a->smallmap >> i) & 1) : (int)((a->largemap[(i - NSMALL) >> 6] >> ((i - NSMALL) & 63)) & 1);
    if (nonempty != marked) cape_heap_fail("check", b, "bin bitmap disagrees with its list");
    for (struct chunk *p = b->fd; p != b; p = p->fd) {
      if (p->fd->bk != p) cape_heap_fail("check", p, "broken bin list");
      if (bin_index(csize(p)) != i) cape_heap_fail("check", p, "chunk in the wrong bin");
      inbins++;
    }
  }
  if (inbins != nfree) cape_heap_fail("check", a, "bins hold chunks that are not free");
  size_t fast_bytes = 0, fast_n = 0;
  for (unsigned i = 0; i < NFAST; i++) {
    unsigned n = 0;
    for (struct chunk *f = a->fast[i]; f; f = f->fd, n++) {
      if ((char *)f < (char *)a + HDR_SIZE || f >= a->top || !(f->head & CINUSE) || csize(f) != (size_t)i * 16 ||
          f->bk != fast_key(a))
        cape_heap_fail("check", f, "bad chunk in a fast list");
      fast_bytes += csize(f);
    }
    if (n != a->fast_count[i] || n > FAST_LIMIT) cape_heap_fail("check", a, "fast list count differs");
    fast_n += n;
  }
  if (fast_n != a->fast_total) cape_heap_fail("check", a, "fast list total differs");
  if (in_use != a->st.in_use + fast_bytes) cape_heap_fail("check", a, "in-use byte count differs");
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
