/* The cape heap's windows: node arenas, deferred frees, settling (heap_test.c runs it). */
#define _GNU_SOURCE
#include "heap_test.h"

/* ---- windows ---- */

void test_window(void) {
  cape_heap_settle(4);
  CHECK(stats(4).base == CAPE_HEAP_NODE_BASE + 3 * CAPE_HEAP_NODE_SPAN);
  CHECK(cape_heap_stats(5, &(struct cape_heap_stats){0}) == -1);
  char *outside = malloc(1000), *outside2 = malloc(50000), *keep = malloc(10);
  fill(outside, 1000, 1);
  fill(outside2, 50000, 2);
  struct cape_heap_stats a0 = stats(0), a3 = stats(3);

  cape_heap_enter(2); /* node 2: arena 3 */
  CHECK(cape_heap_in_window());
  char *in = malloc(100);
  CHECK(cape_heap_arena_of(in) == 3);
  char *in_z = calloc(10, 100);
  CHECK(cape_heap_arena_of(in_z) == 3 && zeros(in_z, 1000));
  void *in_al = aligned_alloc(256, 100);
  CHECK(cape_heap_arena_of(in_al) == 3 && ((uintptr_t)in_al & 255) == 0);
  char *big = malloc(1 << 20); /* more than the node arena's first commit: it grows */
  CHECK(cape_heap_arena_of(big) == 3);
  fill(big, 1 << 20, 3);
  CHECK(stats(3).grows > a3.grows);
  /* own block: freed at once */
  size_t frees3 = stats(3).frees;
  free(in);
  CHECK(stats(3).frees == frees3 + 1);
  /* arena 0's block: deferred, arena 0 untouched */
  free(opaque_ptr(outside));
  CHECK(stats(3).deferred == 1);
  CHECK(stats(0).frees == a0.frees && stats(0).in_use == a0.in_use);
  CHECK(cape_heap_arena_of(outside) == 0); /* still in use until settled */
  /* realloc of arena 0's block: smaller stays, larger moves to the node's arena */
  CHECK(realloc(opaque_ptr(outside2), 100) == outside2);
  char *moved = realloc(opaque_ptr(outside2), 80000);
  CHECK(moved != opaque_ptr(outside2) && cape_heap_arena_of(moved) == 3 && holds(moved, 50000, 2));
  CHECK(stats(3).deferred == 2);
  CHECK(stats(0).in_use == a0.in_use);
  /* realloc of its own block */
  char *grown = realloc(big, 2 << 20);
  CHECK(cape_heap_arena_of(grown) == 3 && holds(grown, 1 << 20, 3));
  /* the node arena's top is never given back inside a window */
  size_t committed = stats(3).committed;
  free(grown);
  free(moved);
  CHECK(stats(3).committed == committed && stats(3).trims == 0);
  CHECK(stats(0).in_use == a0.in_use);
  cape_heap_leave();
  CHECK(!cape_heap_in_window());

  /* The first call after the window settles: every deferred free is done. */
  CHECK(stats(3).deferred == 2);
  void *next = malloc(10);
  CHECK(cape_heap_arena_of(next) == 0);
  CHECK(stats(3).deferred == 0);
  CHECK(stats(0).frees == a0.frees + 2);
  /* node 2's blocks freed outside a window: by their own arena, as every node does */
  size_t in3 = stats(3).in_use;
  free(in_z);
  free(in_al);
  CHECK(stats(3).in_use < in3);
  free(next);
  free(keep);

  /* settle() at cape_start(): deferred frees of another window, before the next one. */
  char *o = malloc(300);
  cape_heap_enter(0);
  free(o);
  CHECK(stats(1).deferred == 1);
  cape_heap_leave();
  cape_heap_settle(4);
  CHECK(stats(1).deferred == 0);
  cape_heap_check();
}
