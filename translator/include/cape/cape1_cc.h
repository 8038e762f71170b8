/* cape1_cc.h: what `cape-cc --model=cape1` generates calls to (rt/cape1_cc.c): 003_45ed75503520c8f4.txt
 * Fig. 2, complete checkpoints, for `parallel for` and `parallel sections` (docs/cape1.md).
 *
 *   int me = cape1_cc_fork(where);   create(original): the master goes on as part 0 and has
 *                                    a process restarted from it for each other part, which
 *                                    returns here with its number
 *   ... part `me` of the work ...
 *   cape1_cc_join(me);               create(after_me), diff; the others end; the master merges
 *                                    every delta into target and continues from it
 */
#ifndef CAPE_CAPE1_CC_H
#define CAPE_CAPE1_CC_H

#include <cape/cc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The parts of a region: cape_num_nodes() under `cape run -n N`, else CAPE1_PARTS (default 3). */
int cape1_cc_parts(void);
/* The program runs the CAPE-1 way (a constructor of every translated file). */
void cape1_cc_init(void);
/* -1: the region runs serially here (inside another region, or one part). */
int cape1_cc_fork(const char *where);
void cape1_cc_join(int me);
/* Part `me`'s share of n iterations: schedule(static) without a chunk (chunk 0) as one block
 * per part, with one round robin chunks. */
void cape1_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int me);
/* Section j's part: j % parts. */
int cape1_cc_mine(int j, int me);
/* This process's part of the current region (-1: outside one, or in a serial one). */
int cape1_cc_part(void);
/* 1 outside every region: the translated code marks its frame (cape_mark_frame) before the
 * fork, the boundary of the part's own frames in its merges (docs/cape1.md). */
int cape1_cc_outside(void);
/* 1 in a region met inside a part (run serially there: a team of one). */
int cape1_cc_nested(void);
/* A barrier of a region (beyond Fig. 2, docs/cape1.md "Regions"): every part's changes of
 * shared memory reach every other part, each keeping its own frames and TLS. */
void cape1_cc_barrier(void);
/* Values a merge of writes cannot give (rt/cape1_values.c): a reduction (002 Def. 4.4: the
 * variable starts from the identity in each part; its partial results are combined with
 * its value before the step at the next exchange), a threadprivate variable (kept per part
 * from region to region), copyin (the master's value, which every part already has). */
void cape1_cc_reduction(void *addr, unsigned long size, int op, int type);
void cape1_cc_threadprivate(void *addr, unsigned long size);
void cape1_cc_copyin(void *addr, unsigned long size);

/* `parallel` regions and the constructs inside them are translated by the default model's
 * templates (docs/translator.md); under --model=cape1 their runtime calls mean the CAPE-1
 * way (docs/cape1.md, "Regions"): cape_cc_fork restarts the master's complete checkpoint as
 * each part, cape_cc_barrier and cape_cc_end (libcape_cc) exchange complete checkpoints'
 * deltas, and the CAPE-2 calls below, which open windows and ask the monitor to combine,
 * become the runtime's. Only in translated code (not in libcape_cc itself). */
#ifndef CAPE1_CC_RUNTIME
#define cape_cc_fork(n, cond, flags, where) cape_cc_fork((n), (cond), (flags) | CAPE_CC_CAPE1, (where))
#define cape_start() ((void)0)                    /* no window: complete checkpoints */
#define cape_create(name) ((void)(name))          /* made by the exchange (cape1_cc.c) */
#define cape_defer_next() ((void)0)               /* (the create it would defer is none) */
#define cape_set_shared(a, s) ((void)(a), (void)(s))
#define cape_set_private(a, s) ((void)(a), (void)(s))
#define cape_set_firstprivate(a, s) ((void)(a), (void)(s))
#define cape_set_lastprivate(a, s) ((void)(a), (void)(s))
#define cape_set_copyprivate(a, s) ((void)(a), (void)(s))
#define cape_set_default_none() ((void)0)
#define cape_set_order(o) ((void)(o))
#define cape_set_copyin(a, s) cape1_cc_copyin((a), (s))
#define cape_set_threadprivate(a, s) cape1_cc_threadprivate((a), (s))
#define cape_reduction(a, s, op, t) cape1_cc_reduction((a), (s), (op), (t))
#endif

#ifdef __cplusplus
}
#endif
#endif
