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
/* The same for a `parallel for` whose nodes deal themselves their shares of its n iterations
 * (cape_cc_own_share after cape_start_own_share; no `before`): n and chunk join the region's
 * determinism check. */
int cape_cc_fork_loop(int num_threads, int cond, int flags, const char *where, unsigned long long n,
                      unsigned long long chunk);
void cape_cc_own_share(cape_share_t *out, unsigned long long n, unsigned long long chunk);
#define CAPE_CC_MASTER_IDLE 1
#define CAPE_CC_WHOLE_TEAM 2 /* a `parallel` region: one thread per node, or num_threads nodes when fewer */
#define CAPE_CC_MT 4 /* cape-cc --model=mt: each node's share runs on its libgomp threads */
#define CAPE_CC_CAPE1 8 /* cape-cc --model=cape1: the parts are restarted complete checkpoints (cape1_cc.h) */
/* The template writes nothing of the program's memory between cape_cc_fork() and its
 * cape_start() (no copyin): cape_region_begin() rides on the next trap (issue 14). */
#define CAPE_CC_DEFER_BEGIN 16
/* A `parallel` region whose nodes beyond the team jump over its code (its directives are at
 * the top of its block): without num_threads its team follows omp_set_num_threads /
 * OMP_NUM_THREADS when they ask for fewer threads than the nodes. A plain region without this
 * flag stops the program instead (its team would be every node: a wrong answer). */
#define CAPE_CC_SHRINK 32
/* This node's thread number in the current team, -1 when it has no share (inside a node's
 * libgomp team of the two-level model: this thread's). */
int cape_cc_tid(void);
/* The two-level model (cape-cc --model=mt, 000_2e1115959baa0e7d.txt Fig. 6): the node's
 * threads for `#pragma omp parallel num_threads(cape_cc_mt_threads())`; each calls
 * cape_cc_mt_enter() first (its team thread number, the node's heap window) and
 * cape_cc_mt_leave() last. cape_cc_mt_last: one of this node's threads runs iteration n-1. */
int cape_cc_mt_threads(void);
/* The two-level model's setup (threads per node, the CPUs, libgomp's thread number), from a
 * constructor of every file cape-cc --model=mt translates: before main, on every node alike. */
void cape_cc_mt_init(void);
void cape_cc_mt_enter(void);
void cape_cc_mt_leave(void);
int cape_cc_mt_last(unsigned long long n, unsigned long long chunk);
int cape_cc_mt_mine(int j); /* section j is one of this node's threads' */
/* 1 in the thread that makes the node's exchanges at a region's barriers (libgomp's 0). */
int cape_cc_mt_exchanger(void);
/* A `parallel` region's reduction, registered (cape_reduction) and recorded, registered again
 * at each barrier by cape_cc_mt_reductions_again() (the two-level model). */
void cape_cc_mt_reduction(void *addr, unsigned long size, int op, int type);
void cape_cc_mt_reductions_again(void);
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
/* TICKPT: the block-scope static variables of every translated file, one entry each in the
 * section cape_cc_static_locals (an address constant, put after the declaration by the
 * translator: nothing runs), registered by cape_cc_share_statics() too. */
struct cape_cc_static_local {
  void *addr;
  unsigned long size;
};
#define CAPE_CC_STATIC_LOCAL(name, x)                                                             \
  static const struct cape_cc_static_local name                                                  \
      __attribute__((used, section("cape_cc_static_locals"), aligned(sizeof(void *)))) = {(void *)&(x), sizeof(x)}
/* 1 when the share holds iteration n-1, the sequentially last one (lastprivate). */
int cape_cc_last(const cape_share_t *s, unsigned long long n);
/* Every threadprivate variable of every translated file, block-scope statics too: one entry
 * per variable in the section cape_cc_tps (an address constant, so a function's static is
 * named where its directive is), all registered before every region's and barrier's start():
 * a region in another file (or a function's own static) must not share them. */
struct cape_cc_tp { void *addr; unsigned long size; };
extern const struct cape_cc_tp __start_cape_cc_tps[] __attribute__((weak, visibility("hidden")));
extern const struct cape_cc_tp __stop_cape_cc_tps[] __attribute__((weak, visibility("hidden")));
#define CAPE_CC_TP_ENTRY(name, x)                                                                  \
  static const struct cape_cc_tp name __attribute__((used, section("cape_cc_tps"), aligned(sizeof(void *)))) = { \
      (void *)&(x), sizeof(x)}
/* The two-level model: the variables are gcc's TLS (no address constant), so a file-scope
 * directive's entry is a function returning the calling thread's copy, called by libcape_cc
 * on the main thread (a slave node's thread 0, which runs the sequential part too). */
struct cape_cc_tpm { void *(*get)(void); unsigned long size; };
extern const struct cape_cc_tpm __start_cape_cc_tpm[] __attribute__((weak, visibility("hidden")));
extern const struct cape_cc_tpm __stop_cape_cc_tpm[] __attribute__((weak, visibility("hidden")));
#define CAPE_CC_TPM_ENTRY(name, x)                                                                 \
  static void *name##_get(void) { return (void *)&(x); }                                           \
  static const struct cape_cc_tpm name __attribute__((used, section("cape_cc_tpm"), aligned(sizeof(void *)))) = { \
      name##_get, sizeof(x)}
/* 0 with CAPE_CC_ALL_THREADPRIVATE=0: only the threadprivates visible at the region, and a
 * slave's copies follow its sequential part (the old way). */
int cape_cc_all_threadprivates(void);
/* The master's threadprivate values into the region's checkpoint, before its last create():
 * each slave takes them back after the region, keeping its own copies aside for the next. */
void cape_cc_tp_out(void);
#define CAPE_CC_THREADPRIVATES()                                                                   \
  do {                                                                                             \
    if (cape_cc_all_threadprivates())                                                              \
      for (const struct cape_cc_tp *cape_tp_ = __start_cape_cc_tps; cape_tp_ < __stop_cape_cc_tps; cape_tp_++) \
        cape_set_threadprivate(cape_tp_->addr, cape_tp_->size);                                    \
  } while (0)
/* lastprivate: this thread's order for cape_set_order(): the number of threads for the
 * thread that runs iteration n-1 of the loop (schedule(static[, chunk])), else its number. */
unsigned long long cape_cc_order(unsigned long long n, unsigned long long chunk);
/* The same for the last of the sections of a sections construct. */
unsigned long long cape_cc_order_of_section(int nsections);
/* 1 when section j of a sections construct is this thread's (round robin). */
int cape_cc_mine(int j);
/* 1 inside a region that runs on the nodes (not serialized): checkpoints are exchanged. */
int cape_cc_distributed(void);
/* `ordered` under --model=mt: waits (polling) for iteration k's turn, then holds it as
 * cape_ordered_enter does; ended by cape_ordered_exit. */
void cape_cc_ordered_turn(const char *name, unsigned long long k);
/* A slave after the program's last parallel region (001 Fig. 3 line 25). */
void cape_cc_exit(void) __attribute__((noreturn));

/* A `parallel` region's private variable x (size bytes), whose bytes from before the region
 * are at orig: recorded (TLS) for the barriers of the functions the region calls, which
 * cannot name it. Called after cape_cc_fork() returned 1, before cape_start(). */
void cape_cc_private(void *x, const void *orig, unsigned long size);
/* cape_set_shared() of a variable the `parallel` region shares, recorded (TLS) too: the
 * barriers of the functions it calls register it again (cape_cc_orphan_back), so that the
 * caller's writes after such a barrier travel under TICKPT. */
void cape_cc_region_shared(void *x, unsigned long size);
/* An orphaned barrier (in a function a region calls), before its cape_create(): every
 * recorded private variable gets its bytes from before the region back, as at the region's
 * own barriers, so no node ships its private values and the monitor's stop() (which puts a
 * registered private variable back to its value at start()) loses nothing; each node's
 * values are kept in TLS ... */
void cape_cc_orphan_keep(void);
/* ... and put back after the exchange; the region's shared variables are registered again
 * (before the barrier's own clause calls and its cape_start()). */
void cape_cc_orphan_back(void);
/* A variably modified local of a region (`double s[n]`), which no `static __thread` copy can
 * hold: before a barrier's create() its `size` bytes go to this thread's buffer (its TLS,
 * then a shared mapping: never tracked) and are cleared, as CAPE_CC_SAVE + CAPE_CC_CLEAR do; after the
 * exchange cape_cc_back_bytes puts them back, called in the same order. */
void cape_cc_keep_bytes(void *x, unsigned long size);
void cape_cc_back_bytes(void *x, unsigned long size);

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

/* The exchanges, shared by every construct (docs/translator.md, rule 1). cape_create()
 * itself is generated inline, in the user's function: it captures the stack above its
 * caller's frame, so a helper here calling it would ship the helper's own frame (its saved
 * registers, which hold the user's values and differ between nodes) and inject it into the
 * other nodes' live frames. The calls after it capture nothing: stop, send, receive,
 * wait_for and broadcast take no memory, and inject writes only runs of checkpoints that
 * were made above the user's frame, which lies above these helpers' frames. So each
 * construct generates its cape_create() and calls one of these for the rest. */

/* The end of a region, after this node's cape_create("after") (001 Fig. 3 lines 6, 18):
 * lines 7-12 on the master (stop, merge every slave's part, inject, broadcast unless
 * `last`), 19-25 on a slave (stop, send, then receive and inject, or exit after the last
 * region); only when cape_cc_distributed(). Then the team ends (cape_cc_join). */
void cape_cc_end(int last);
/* A barrier, after this node's cape_create("after"): the same exchange, never the last
 * (the caller starts tracking again with cape_start()). */
void cape_cc_barrier(void);
/* `parallel for`, on the master after cape_start() (001 Fig. 3 line 3): the first call
 * writes every slave's share of the loop (n iterations, chunk as in cape_cc_share) into
 * desc[slave] and returns 1; the caller creates `before` (one for all slaves) and calls
 * cape_cc_send_share(). The next call clears desc (so the master's `after` clears it on
 * every node: memory outside regions stays the same everywhere), writes the master's own
 * share into *own and returns 0. desc is the file's cape_desc[CAPE_CC_MAX_NODES]. */
int cape_cc_deal(cape_share_t *desc, cape_share_t *own, unsigned long long n, unsigned long long chunk);
/* Sends `before` to every slave (line 5). */
void cape_cc_send_share(void);
/* On a slave (lines 14-15): receives and injects the master's `before`; with then_start,
 * the caller's next runtime call is cape_start() and both ride on its trap. */
void cape_cc_receive_share(int then_start);
/* On a slave after its cape_start() (line 16): its share, from desc[this node]. */
void cape_cc_my_share(cape_share_t *out, const cape_share_t *desc);

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CC_H */
