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
/* -1: the region runs serially here (inside another region, or one part). */
int cape1_cc_fork(const char *where);
void cape1_cc_join(int me);
/* Part `me`'s share of n iterations: schedule(static) without a chunk (chunk 0) as one block
 * per part, with one round robin chunks. */
void cape1_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int me);
/* Section j's part: j % parts. */
int cape1_cc_mine(int j, int me);

#ifdef __cplusplus
}
#endif
#endif
