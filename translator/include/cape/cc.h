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
/* The share of `thread` in a loop of n iterations; chunk 0 means schedule(static) without a
 * chunk size, split like libgomp (the first n % T threads get one more). */
cape_share_t cape_cc_share(unsigned long long n, unsigned long long chunk, int thread);
/* 1 when section j of a sections construct is this thread's (round robin). */
int cape_cc_mine(int j);
/* A barrier inside a region: create, exchange through the master, inject (the second half
 * of 001 Fig. 3 without leaving the region), then cape_cc_resume() restarts tracking.
 * Both do nothing outside a distributed team. */
void cape_cc_sync(void);
void cape_cc_resume(void);
/* End of a distributed region on this node: the exchange of 001 Fig. 3 lines 6-12 / 18-25.
 * last: the region is the program's last (docs/translator.md, last_parallel rule); then the
 * master does not broadcast and the slaves exit with status 0. */
void cape_cc_end(int last);
/* The `before` exchange of 001 Fig. 3 lines 2-5 / 14-16, generalised to chunks: the master
 * writes each slave's share into desc[slave], creates and sends `before`; a slave receives
 * and injects it. Returns this node's share. Starts tracking on every node. */
cape_share_t cape_cc_distribute(cape_share_t *desc, unsigned long long n,
                                unsigned long long chunk);

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CC_H */
