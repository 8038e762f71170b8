/* cape/cc.h: what code translated by cape-cc calls besides cape.h (libcape_cc).
 *
 * Team bookkeeping for the templates of docs/translator.md: which OpenMP thread each node
 * is, the static schedule, barriers. Every write this library makes to the program's memory
 * happens outside a start()/create() window (or is undone before the next create()), so
 * none of it ends up in a checkpoint; see "Template bookkeeping" in docs/translator.md.
 */
#ifndef CAPE_CC_H
#define CAPE_CC_H

#include "cape/cape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest job the translated code supports (size of the per-TU `before` descriptors). */
#define CAPE_CC_MAX_NODES 256

/* A thread's share of a loop of n iterations numbered 0..n-1 under schedule(static[, chunk]):
 * chunks [b, min(b + chunk, hi)) for b = lo, lo + stride, ... while b < hi. */
typedef struct cape_share {
  unsigned long long lo, hi, stride, chunk;
} cape_share_t;

/* Begins a parallel region, before cape_start(). num_threads: the num_threads clause or 0;
 * cond: the if clause (1 without one); flags: CAPE_CC_MASTER_IDLE for cape-cc --master-idle (the master takes
 * no share, exact 001_3036025dc34c4021.txt Fig. 3). Returns 1 when the region runs on the
 * nodes, 0 when it runs serially on every node (nested region, if(0), one node or one
 * thread); in both cases the omp_ calls answer for the new team. */
int cape_cc_fork(int num_threads, int cond, int flags);
#define CAPE_CC_MASTER_IDLE 1
#define CAPE_CC_WHOLE_TEAM 2 /* a `parallel` region: one thread per node, whatever is asked */
/* This node's thread number in the current team, -1 when it has no share. */
int cape_cc_tid(void);
/* Ends the region begun by cape_cc_fork (after cape_stop() when it returned 1). */
void cape_cc_join(void);
/* OpenMP thread number of `node` in the current team, -1 when the node has no share. */
int cape_cc_thread_of_node(int node);
/* The share of `thread` in a loop of n iterations, written to *out (never returned by value:
 * a returned struct may pass through a temporary in the caller's tracked frame); chunk 0
 * means schedule(static) without a chunk size, split like libgomp (the first n % T threads
 * get one more). */
void cape_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int thread);
/* 1 when section j of a sections construct is this thread's (round robin). */
int cape_cc_mine(int j);
/* 1 inside a region that runs on the nodes (not serialized): checkpoints are exchanged. */
int cape_cc_distributed(void);
/* A slave after the program's last parallel region (001 Fig. 3 line 25). */
void cape_cc_exit(void) __attribute__((noreturn));

/* Private variables: their bytes are saved before a region and put back before each
 * create(), so no checkpoint carries them. The empty asm tells the compiler the variable
 * may have been written (reading an uninitialised private is fine here: bytes only). */
#define CAPE_CC_SAVE(save, x)                                   \
  do {                                                          \
    __asm__ __volatile__("" : : "r"(&(x)) : "memory");          \
    __builtin_memcpy((void *)&(save), &(x), sizeof(x));         \
  } while (0)
#define CAPE_CC_RESTORE(x, save) __builtin_memcpy((void *)&(x), &(save), sizeof(x))
/* A variable declared inside a region is private too, but its bytes from before the region
 * are unknown: every node clears it before create() (equal bytes on every node are no
 * conflict) and takes its own value back after the exchange. */
#define CAPE_CC_CLEAR(x) __builtin_memset((void *)&(x), 0, sizeof(x))

/* The checkpoint calls themselves are generated inline, in the user's function: create()
 * captures the stack above its caller's frame, so calling it from a helper here would ship
 * the helper's dead frames too. */

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CC_H */
