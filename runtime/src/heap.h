/* The cape heap: libcape's malloc (runtime/src/heap_*.c), seen from cape.c, the tests and the
 * benchmark. Not part of the program's API (hidden symbols); docs/monitor.md "The heap and
 * stdio" describes the design, the address layout is in protocol.h (CAPE_HEAP_*).
 *
 * cape.c drives the windows:
 *   cape_start():  cape_heap_settle(nodes); trap; cape_heap_enter(rank);
 *   cape_stop():   trap; cape_heap_leave();
 * Between enter and leave this thread allocates from node `rank`'s arena (1 + rank) and
 * defers frees of other arenas' blocks; elsewhere it uses arena 0. settle() must be called
 * where every node holds the same memory (before start()'s trap): it sets up the arenas of
 * `nodes` nodes and performs every node's deferred frees.
 */
#ifndef CAPE_HEAP_H
#define CAPE_HEAP_H

#pragma GCC visibility push(hidden)

void cape_heap_init(void);         /* reserve arena 0 (also done lazily by the first call) */
void cape_heap_settle(int nodes);  /* before cape_start()'s trap, on every node alike */
void cape_heap_enter(int rank);    /* after cape_start()'s trap: the window begins */
void cape_heap_leave(void);        /* after cape_stop()'s trap: the window ends */

/* For the tests and the benchmark. */
struct cape_heap_stats {
  unsigned long base;       /* the arena's address */
  unsigned long committed;  /* bytes readable and writable from `base` */
  unsigned long reserved;   /* bytes reserved from `base` (committed included) */
  unsigned long in_use;     /* bytes of the blocks in use, headers included */
  unsigned long top;        /* free bytes at the end of the committed part */
  unsigned long mallocs;    /* blocks handed out */
  unsigned long frees;      /* blocks given back */
  unsigned long deferred;   /* other arenas' blocks freed here in a window, not yet settled */
  unsigned long grows;      /* mprotect calls that committed more */
  unsigned long trims;      /* decommits of the top, outside windows */
};
/* 0 and *s filled when `arena` (0 .. 256) is set up, else -1. */
int cape_heap_stats(int arena, struct cape_heap_stats *s);
/* The arena of a block in use, -1 for a pointer the cape heap did not hand out. */
int cape_heap_arena_of(const void *p);
/* Walks every arena and its bins; aborts with a message naming what is wrong. */
void cape_heap_check(void);
/* 1 between cape_heap_enter() and cape_heap_leave() on this thread. */
int cape_heap_in_window(void);

#pragma GCC visibility pop

#endif /* CAPE_HEAP_H */
