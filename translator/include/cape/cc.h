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

/* Begins a parallel region, before cape_start(). `where`: the construct's "file:line", the
 * region's name in cape's messages (cape_region_begin). num_threads: the num_threads clause or 0;
 * cond: the if clause (1 without one); flags: CAPE_CC_MASTER_IDLE for cape-cc --master-idle (the master takes
 * no share, exact 001_3036025dc34c4021.txt Fig. 3). Returns 1 when the region runs on the
 * nodes, 0 when it runs serially on every node (nested region, if(0), one node or one
 * thread); in both cases the omp_ calls answer for the new team. */
int cape_cc_fork(int num_threads, int cond, int flags, const char *where);
#define CAPE_CC_MASTER_IDLE 1
#define CAPE_CC_WHOLE_TEAM 2 /* a `parallel` region: one thread per node, or num_threads nodes when fewer */
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
/* TICKPT: each translated file puts a function registering its static variables as shared
 * on a list (from a constructor, before main); cape_cc_share_statics() calls them all, before
 * every region's cape_start() (docs/translator.md, TICKPT). */
void cape_cc_add_statics(void (*fn)(void));
void cape_cc_share_statics(void);
/* 1 when the share holds iteration n-1, the sequentially last one (lastprivate). */
int cape_cc_last(const cape_share_t *s, unsigned long long n);
/* lastprivate: this thread's order for cape_set_order(): the number of threads for the
 * thread that runs iteration n-1 of the loop (schedule(static[, chunk])), else its number. */
unsigned long long cape_cc_order(unsigned long long n, unsigned long long chunk);
/* The same for the last of the sections of a sections construct. */
unsigned long long cape_cc_order_of_section(int nsections);
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
/* The same for `size` bytes at `addr` (an array section of a reduction) into `save`. */
#define CAPE_CC_SAVE_BYTES(save, addr, size)                    \
  do {                                                          \
    __asm__ __volatile__("" : : "r"(addr) : "memory");          \
    __builtin_memcpy((void *)&(save), (addr), (size));          \
  } while (0)
/* A local the region shares: its address escapes, so the compiler keeps it in memory across
 * the runtime calls (never only in a register that an injected checkpoint cannot reach). */
#define CAPE_CC_IN_MEMORY(x) __asm__ __volatile__("" : : "r"(&(x)) : "memory")
/* A variable declared inside a region is private too, but its bytes from before the region
 * are unknown: every node clears it before create() (equal bytes on every node are no
 * conflict) and takes its own value back after the exchange. */
#define CAPE_CC_CLEAR(x) __builtin_memset((void *)&(x), 0, sizeof(x))

/* copyin: every byte changed before start(), so putting the value back is a change that
 * the master's `copyin` checkpoint carries (docs/translator.md, copyin). */
#define CAPE_CC_FLIP(x)                                                        \
  do {                                                                         \
    unsigned char *cape_p_ = (unsigned char *)(void *)&(x);                    \
    for (unsigned long cape_i_ = 0; cape_i_ < sizeof(x); cape_i_++)            \
      cape_p_[cape_i_] = (unsigned char)~cape_p_[cape_i_];                     \
  } while (0)

/* reduction(op: x): the element type of x for cape_reduction (cape.h), 0 when x has no
 * type a reduction can combine; the translator asserts it is not 0 where the clause is. */
#define CAPE_CC_TYPE(x)                                                           \
  _Generic((x),                                                                   \
      _Bool: CAPE_T_UINT8,                                                        \
      char: ((char)-1 < 0 ? CAPE_T_INT8 : CAPE_T_UINT8),                          \
      signed char: CAPE_T_INT8,                                                   \
      unsigned char: CAPE_T_UINT8,                                                \
      short: CAPE_T_INT16,                                                        \
      unsigned short: CAPE_T_UINT16,                                              \
      int: CAPE_T_INT32,                                                          \
      unsigned int: CAPE_T_UINT32,                                                \
      long: (sizeof(long) == 8 ? CAPE_T_INT64 : CAPE_T_INT32),                    \
      unsigned long: (sizeof(long) == 8 ? CAPE_T_UINT64 : CAPE_T_UINT32),         \
      long long: CAPE_T_INT64,                                                    \
      unsigned long long: CAPE_T_UINT64,                                          \
      float: CAPE_T_FLOAT,                                                        \
      double: CAPE_T_DOUBLE,                                                      \
      default: 0)
/* & | ^ take integers only. */
#define CAPE_CC_IS_INTEGER(x) \
  (CAPE_CC_TYPE(x) != CAPE_T_FLOAT && CAPE_CC_TYPE(x) != CAPE_T_DOUBLE ? CAPE_CC_TYPE(x) : 0)

/* The checkpoint calls themselves are generated inline, in the user's function: create()
 * captures the stack above its caller's frame, so calling it from a helper here would ship
 * the helper's dead frames too. */

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CC_H */
