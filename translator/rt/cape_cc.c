/* libcape_cc: team bookkeeping and the OpenMP API for programs translated by cape-cc.
 *
 * State lives in this library's static data (the program's tracked memory), except what
 * every region's fork and join change (the team, the nesting depth: the main thread's TLS,
 * below). It is written only between a region's cape_stop() and the next cape_start(), or
 * restored to its exact bytes before the next create(), so no checkpoint ever carries it
 * (docs/translator.md, "Template bookkeeping"). Every node computes the same values except `tid`.
 */
#define _GNU_SOURCE
#define CAPE1_CC_RUNTIME /* cape1_cc.h's mapping of the translated code's calls: not here */
#include "cape/cape1_cc.h"
#include "cape/cc.h"
#include "cape/omp/omp.h"
#include "cape1_values.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct team {
  int distributed; /* the region runs on the nodes (checkpoints are exchanged) */
  int nthreads;    /* OpenMP team size */
  int by_node;     /* this node's thread number is cape_cc_thread_of_node(its rank), else 0 */
  int master_idle; /* threads are nodes 1..N-1 (001 Fig. 3 exactly) */
  const char *skipping; /* a `parallel` region whose nodes beyond the team jump over its code:
                           its "file:line" (a string of the program's, the same on every node) */
};
/* The team is the same on every node: a node's own thread number is computed from its rank
 * (TLS), never stored here. So the memory every node holds stays the same between the
 * region's cape_region_begin() and cape_start(), and the determinism digest may be taken at
 * start()'s trap (region_begin deferred, issue 14: one stop fewer per node per region). */

/* Saved outer teams for serialized nested regions. */
#define MAX_LEVELS 64
/* The team, the nesting depth and the saved outer teams change at every region's fork and
 * join: kept in the main thread's TLS (never tracked: docs/monitor.md, "Eighth pass"), so that
 * a region that writes nothing of the program's leaves every tracked page unwritten (issue 14:
 * these two pages, read again by every node's digest and copied by its start() at every
 * region, were all an empty region wrote). Every thread reaches the main thread's through
 * team_at (set once, before main, at the same address on every node), as it reached globals. */
struct team_state {
  struct team cur;
  int level;                      /* parallel regions entered and not left (nesting depth) */
  struct team saved[MAX_LEVELS];
};
static __thread struct team_state team_here = {{0, 1, 0, 0, 0}, 0, {{0, 0, 0, 0, 0}}};
static struct team_state *team_at;
__attribute__((constructor)) static void team_init(void) { team_at = &team_here; }
static inline struct team_state *team_state(void) { return team_at ? team_at : &team_here; }
#define cur (team_state()->cur)
#define level (team_state()->level)
#define saved (team_state()->saved)
static int requested;       /* omp_set_num_threads, 0 = not set */

/* The two-level model (cape-cc --model=mt, 000_2e1115959baa0e7d.txt Fig. 5-6; docs/translator.md
 * "The two-level model"): each node runs its share with mt_k libgomp threads, and the OpenMP
 * team is all the nodes' threads: node r's are r*K .. r*K+K-1 (r counted among the nodes that
 * take shares). Set by the first region of an mt template (cape_cc_fork with CAPE_CC_MT),
 * before its window, the same on every node; read only after. */
static int mt_k = 1;                  /* threads per node; 1 until an mt region */
static int mt_ready;
static int (*gomp_thread_num)(void);  /* libgomp's omp_get_thread_num (ours answers for the team) */
/* This node, for the node's threads: in the main thread's TLS (never tracked: a node's own
 * number must not travel), read by the others through mt_rank_at, set by cape_cc_mt_init to the
 * same address on every node. */
static __thread int mt_rank;
static int *mt_rank_at;

/* This node's thread number in the current team (-1: no share), from any of its threads. */
static int node_tid(void) {
  return cur.by_node ? cape_cc_thread_of_node(mt_rank_at ? *mt_rank_at : mt_rank) : 0;
}
static __thread int mt_in;            /* this thread runs in its node's libgomp team */
static __thread int mt_tid;           /* ... as the team's thread mt_tid (-1: no share) */
static __thread int mt_joined;        /* ... and joined the node's heap window */
/* Regions entered by this thread inside its node's team (a function with a region called
 * from a loop body): serialized, a team of one, never touching the shared team state. */
static __thread int mt_nested;

/* Threadprivate copies of a slave's thread (below, "Threadprivate variables"). */
static void tp_register(void);
static void tp_fork(void);
static void tp_join(void);

static int env_int(const char *name) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  int n = atoi(s);
  return n > 0 ? n : 0;
}

/* The main thread's stack, grown before the first window: the node's thread 0 runs a region's
 * body in libgomp's frames below the user's (with its private copies, arrays included), and a
 * stack growing inside a window is a mapping change on one node (the other nodes' maps would
 * differ), which the mprotect tracker's split stack may even refuse. Up to half the limit. */
__attribute__((noinline)) static void grow_stack(void) {
  struct rlimit rl;
  unsigned long want = 4UL << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < want) want = rl.rlim_cur / 2;
  volatile char *p = __builtin_alloca(want);
  for (unsigned long i = 0; i < want; i += 4096) p[i] = 0;
  __asm__ volatile("" : : "r"(p) : "memory");
}

/* Threads per node: `cape run --threads-per-node K` (CAPE_THREADS_PER_NODE), else the node's
 * CPUs. The monitor may have pinned the program to one CPU (its synchronous trackers want
 * that): the program asks for all of them back, or its threads would share one. */
void cape_cc_mt_init(void) {
  if (mt_ready) return;
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
  sched_setaffinity(0, sizeof all, &all); /* the kernel keeps the CPUs we may use */
  cpu_set_t now;
  int cpus = sched_getaffinity(0, sizeof now, &now) == 0 ? CPU_COUNT(&now) : 1;
  mt_k = env_int("CAPE_THREADS_PER_NODE");
  if (!mt_k) mt_k = cpus > 0 ? cpus : 1;
  gomp_thread_num = (int (*)(void))dlsym(RTLD_NEXT, "omp_get_thread_num");
  mt_rank_at = &mt_rank;
  grow_stack();
  mt_ready = 1;
}

static int env_threads(void) {
  /* The environment is the same on every node (ARCHITECTURE.md, determinism contract). */
  const char *s = getenv("OMP_NUM_THREADS");
  if (!s || !*s) return 0;
  int n = atoi(s);
  return n > 0 ? n : 0;
}

static int max_threads(int nodes, int master_idle) {
  int avail = master_idle ? nodes - 1 : nodes;
  if (avail < 1) avail = 1;
  avail *= mt_k;
  int want = requested ? requested : env_threads();
  return want > 0 && want < avail ? want : avail;
}

/* A plain `parallel` region (no num_threads) whose translation cannot leave nodes out
 * (a directive inside a loop or an `if` of the region, or --model=mt/cape1): when
 * omp_set_num_threads / OMP_NUM_THREADS asks for fewer threads than `avail`, its team would
 * be every thread, not the one asked for (a silent wrong answer). Every node computes the
 * same (the environment and `requested` are the same on every node) and stops alike. */
static void refuse_fixed_team(int avail, int flags, const char *where) {
  int want = requested ? requested : env_threads();
  if (want <= 0 || want >= avail) return;
  const char *why = (flags & CAPE_CC_CAPE1) ? "--model=cape1 gives a plain region every part: add num_threads(...) to it"
                    : (flags & CAPE_CC_MT)  ? "--model=mt gives a plain region every node's threads: add num_threads(...) to it"
                                            : "a directive inside a loop or an `if` of the region keeps every node in it: "
                                              "move its directives to the top of the region's block";
  fprintf(stderr,
          "cape: %s: this parallel region's team is every %s (%d threads), but %s asks for %d; %s, or run on %d "
          "thread%s (cape run -n %d%s)\n",
          where, (flags & CAPE_CC_MT) ? "node's threads" : "node", avail,
          requested ? "omp_set_num_threads" : "OMP_NUM_THREADS", want, why, want, want == 1 ? "" : "s", want,
          (flags & CAPE_CC_MT) ? " --threads-per-node 1" : "");
  exit(3);
}

/* The current region's private variables, for orphaned barriers (cc.h): TLS, never
 * tracked. Recorded at level 1 only, forgotten when the region ends. */
#define MAX_PRIVATES 64
#define MAX_PRIVATE_BYTES (64 * 1024)
static __thread struct {
  unsigned char *addr;
  const unsigned char *orig;
  unsigned long size;
} privs[MAX_PRIVATES];
static __thread int nprivs;
static __thread unsigned char kept[MAX_PRIVATE_BYTES];
#define MAX_SHARED 1024
static __thread struct {
  void *addr;
  unsigned long size;
} shared[MAX_SHARED];
static __thread int nshared;

/* --model=cape1 (cape1_cc.h): the current level-1 team's parts are processes restarted from
 * the master's complete checkpoint (written before it, the same in every part); each part's
 * number is its own (cape1_cc_part). cape1_forked: the part cape1_cc_fork gave at each level
 * (TLS), -2 where the level did not fork. */
static int cape1_team;
static int cape1_mode; /* cape1_cc_init(): the team outside regions is the parts */
void cape1_cc_init(void) {
  cape1_mode = 1;
  cape1_values_init();
}
static __thread int cape1_forked[MAX_LEVELS];

static int cape1_fork(int num_threads, int cond, int flags, const char *where) {
  if (level >= MAX_LEVELS) {
    fprintf(stderr, "cape: parallel regions nested deeper than %d\n", MAX_LEVELS);
    abort();
  }
  saved[level] = cur;
  int outer_level = level++;
  cape1_forked[outer_level] = -2;
  if (outer_level > 0 || !cond || cape1_cc_part() >= 0) {
    cur = (struct team){0, 1, 0, 0, 0}; /* nested, if(false), or in a part: a team of one */
    return 0;
  }
  int parts = cape1_cc_parts();
  if ((flags & CAPE_CC_WHOLE_TEAM) && num_threads <= 0) refuse_fixed_team(parts, flags, where);
  int t = num_threads > 0 && num_threads < parts ? num_threads : parts;
  cur = (struct team){parts > 1, parts > 1 ? t : 1, 0, 0, 0};
  cape1_team = parts > 1;
  int me = cape1_cc_fork(where); /* create(original); each part returns with its number */
  cape1_forked[outer_level] = me;
  return me >= 0 || parts == 1;
}

/* cape_cc_fork_loop's hash of the loop (TLS), for the region_begin of the fork it makes. */
static __thread unsigned long long fork_loop;

int cape_cc_fork(int num_threads, int cond, int flags, const char *where) {
  unsigned long long loop = fork_loop;
  fork_loop = 0;
  if (flags & CAPE_CC_CAPE1) return cape1_fork(num_threads, cond, flags, where);
  if (mt_in || mt_nested) { /* nested in a node's team: a team of one (nesting is off) */
    mt_nested++;
    return 0;
  }
  int master_idle = (flags & CAPE_CC_MASTER_IDLE) != 0;
  if (flags & CAPE_CC_MT) cape_cc_mt_init();
  if (level >= MAX_LEVELS) {
    fprintf(stderr, "cape: parallel regions nested deeper than %d\n", MAX_LEVELS);
    abort();
  }
  saved[level] = cur;
  int outer_level = level++;
  if (outer_level > 0 || !cond) {
    /* Nested (nesting is off, as by default in OpenMP) or if(false): a team of one. */
    cur = (struct team){0, 1, 0, 0, 0};
    return 0;
  }
  /* A plain region that cannot shrink stops before its region begins, on every node alike. */
  if ((flags & CAPE_CC_WHOLE_TEAM) && !(flags & CAPE_CC_SHRINK) && num_threads <= 0) {
    int n = cape_num_nodes();
    refuse_fixed_team((master_idle && n > 1 ? n - 1 : n) * mt_k, flags, where);
  }
  /* Every node is here with the same memory (the determinism check: cape.h). With
     CAPE_CC_DEFER_BEGIN (the template writes nothing of the program's before its
     cape_start()), the check rides on the next trap, start()'s: nothing written here
     differs between nodes. */
  if (cape_num_nodes() > 1) tp_register();
  if ((flags & CAPE_CC_DEFER_BEGIN) && cape_num_nodes() > 1) cape_defer_next();
  int nodes = loop ? cape_region_begin_loop(where, loop) : cape_region_begin(where);
  if (nodes > CAPE_CC_MAX_NODES) {
    fprintf(stderr, "cape: %d nodes, translated code supports at most %d\n", nodes,
            CAPE_CC_MAX_NODES);
    abort();
  }
  int t = max_threads(nodes, master_idle && nodes > 1);
  if (num_threads > 0 && num_threads < t) t = num_threads;
  const char *skipping = 0;
  if (flags & CAPE_CC_WHOLE_TEAM) {
    /* A `parallel` region: every node, or the first num_threads nodes (the others run
       the region's worksharing constructs with no share and skip the rest, which the
       translation makes them jump over); without num_threads, with CAPE_CC_SHRINK, the
       first omp_set_num_threads / OMP_NUM_THREADS nodes (max_threads), as OpenMP does. */
    int avail = (master_idle ? nodes - 1 : nodes) * mt_k;
    if (num_threads > 0) t = num_threads < avail ? num_threads : avail;
    else t = (flags & CAPE_CC_SHRINK) ? max_threads(nodes, master_idle && nodes > 1) : avail;
    if (t < avail) skipping = where;
  }
  if (nodes == 1) {
    /* One node: no checkpoints; under the two-level model its threads are the team. */
    cur = (struct team){0, mt_k > 1 ? t : 1, 0, 0, 0};
    return 0;
  }
  mt_rank = cape_node_id(); /* TLS: a node's own number must not be in its memory */
  cur.distributed = 1;
  cur.nthreads = t;
  cur.master_idle = master_idle;
  cur.by_node = 1;
  cur.skipping = skipping;
  tp_fork(); /* (the two-level model: the main thread's TLS copies, thread 0 of a slave node) */
  return 1;
}

/* The end of a cape1 team: the exchange (the other parts end there), then the team ends in
 * the master. */
static void cape1_end(void) {
  int me = level > 0 ? cape1_forked[level - 1] : -2;
  if (me != -2) cape1_cc_join(me);
  if (level == 1) cape1_team = 0;
  cape_cc_join();
}

/* The two-level model: a `parallel` region's reductions, registered at its start and again
 * at each of its barriers (by the thread that exchanges, inside the team, where the
 * variable's name is its own private copy: the original's address is the one recorded). */
#define MAX_REDUCTIONS 64
static __thread struct {
  void *addr;
  unsigned long size;
  int op, type;
} reds[MAX_REDUCTIONS];
static __thread int nreds;

void cape_cc_mt_reduction(void *addr, unsigned long size, int op, int type) {
  if (nreds == MAX_REDUCTIONS) {
    fprintf(stderr, "cape: a parallel region with more than %d reductions\n", MAX_REDUCTIONS);
    abort();
  }
  reds[nreds].addr = addr;
  reds[nreds].size = size;
  reds[nreds].op = op;
  reds[nreds].type = type;
  nreds++;
  cape_reduction(addr, size, op, type);
}

void cape_cc_mt_reductions_again(void) {
  for (int i = 0; i < nreds; i++) cape_reduction(reds[i].addr, reds[i].size, reds[i].op, reds[i].type);
}

void cape_cc_join(void) {
  if (mt_nested) {
    mt_nested--;
    return;
  }
  if (level == 1) nprivs = nshared = nreds = 0;
  if (level > 0) {
    cur = saved[--level];
    saved[level] = (struct team){0, 0, 0, 0, 0}; /* back to its bytes before the fork */
  }

}

/* Inside a node's libgomp team before cape_cc_mt_enter() (gcc's copyin code runs first and
 * asks omp_get_thread_num() != 0), the number is libgomp's plus the node's first. */
int cape_cc_tid(void) {
  if (cape1_cc_nested()) return 0; /* a cape1 region inside a part: a team of one */
  if (level == 1 && cape1_team) { /* a part of a cape1 team */
    int p = cape1_cc_part();
    return p >= 0 && p < cur.nthreads ? p : p >= 0 ? -1 : 0;
  }
  if (level == 0 && cape1_cc_part() >= 0) return cape1_cc_part(); /* cape1's parallel for, sections */
  if (mt_nested) return 0;
  if (mt_in) return mt_tid;
  int tid = node_tid();
  if (mt_k > 1 && gomp_thread_num && tid >= 0) return tid + gomp_thread_num();
  return tid;
}

int cape_cc_thread_of_node(int node) {
  if (!cur.distributed) return node == 0 ? 0 : -1;
  int t = cur.master_idle ? node - 1 : node;
  if (t >= 0) t *= mt_k; /* the two-level model: the node's first thread */
  return t >= 0 && t < cur.nthreads ? t : -1;
}

/* ---- the two-level model: a node's libgomp team (cc.h) ---- */

static int team_size(void) {
  if (cape1_cc_nested()) return 1;
  if (level == 0 && cape1_cc_part() >= 0) return cape1_cc_parts();
  return mt_nested ? 1 : cur.nthreads;
}

int cape_cc_mt_threads(void) {
  int tid = node_tid();
  if (mt_nested || tid < 0) return 1; /* no share: one thread, which finds no iteration */
  int n = cur.nthreads - tid;
  return n < mt_k ? n : mt_k;
}

void cape_cc_mt_enter(void) {
  if (mt_nested) return; /* a nested team of one: this thread keeps its place */
  int local = gomp_thread_num ? gomp_thread_num() : 0;
  int tid = node_tid();
  mt_tid = tid < 0 ? -1 : tid + local;
  mt_in = 1;
  mt_joined = cur.distributed && cape_thread_enter_window(*mt_rank_at);
}

void cape_cc_mt_leave(void) {
  if (mt_nested) return;
  if (mt_joined) cape_thread_leave_window();
  mt_joined = mt_in = 0;
  mt_tid = 0;
}

/* The thread that makes the node's exchanges at a barrier of a `parallel` region: libgomp's
 * thread 0, the one that called cape_start() (its runtime calls use the frame marked
 * before the team started, cape_mark_frame). Outside a node's team: this thread. */
int cape_cc_mt_exchanger(void) { return !mt_in || !gomp_thread_num || gomp_thread_num() == 0; }

/* 1 when one of this node's threads runs iteration n-1 (lastprivate). */
int cape_cc_mt_last(unsigned long long n, unsigned long long chunk) {
  if (mt_nested) return 1; /* a team of one ran every iteration */
  int tid = node_tid();
  if (tid < 0) return 0;
  int k = cape_cc_mt_threads();
  for (int g = tid; g < tid + k; g++) {
    cape_share_t s;
    cape_cc_share(&s, n, chunk, g);
    if (cape_cc_last(&s, n)) return 1;
  }
  return 0;
}

void cape_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int thread) {
  cape_share_t s = {0, 0, 1, 1};
  unsigned long long nt = (unsigned long long)team_size();
  if (thread < 0 || n == 0) {
    *out = s;
    return;
  }
  unsigned long long t = (unsigned long long)thread;
  if (chunk == 0) {
    /* libgomp's static split: the first n % T threads get one more iteration. */
    unsigned long long q = n / nt, r = n % nt;
    s.lo = t * q + (t < r ? t : r);
    s.hi = s.lo + q + (t < r ? 1 : 0);
    s.chunk = s.hi - s.lo;
    s.stride = s.chunk ? s.chunk : 1;
    *out = s;
    return;
  }
  /* Round robin chunks: chunk j goes to thread j % T. */
  s.lo = t * chunk;
  s.hi = n;
  s.chunk = chunk;
  s.stride = chunk * nt;
  if (s.lo >= n) s.lo = s.hi = 0;
  *out = s;
}

int cape_cc_last(const cape_share_t *s, unsigned long long n) {
  if (n == 0 || s->lo >= s->hi || s->hi < n || n - 1 < s->lo) return 0;
  /* Chunks start at lo, lo + stride, ...: n-1 is ours when it falls inside one. */
  return (n - 1 - s->lo) % s->stride < s->chunk;
}

/* Only the highest order matters (the others hold the original value again): the
 * thread with the last iteration gets T, every other thread its number, all distinct and
 * within the monitor's range. */
unsigned long long cape_cc_order(unsigned long long n, unsigned long long chunk) {
  cape_share_t s;
  int tid = node_tid();
  if (tid < 0) return 0;
  if (mt_k > 1) return cape_cc_mt_last(n, chunk) ? (unsigned long long)cur.nthreads : (unsigned long long)tid;
  cape_cc_share(&s, n, chunk, tid);
  return cape_cc_last(&s, n) ? (unsigned long long)cur.nthreads : (unsigned long long)tid;
}

unsigned long long cape_cc_order_of_section(int nsections) {
  int tid = node_tid();
  if (tid < 0) return 0;
  if (mt_k > 1) return cape_cc_mt_mine(nsections - 1) ? (unsigned long long)cur.nthreads : (unsigned long long)tid;
  return cape_cc_mine(nsections - 1) ? (unsigned long long)cur.nthreads : (unsigned long long)tid;
}

/* Written before main (constructors) and read only: never in a checkpoint. */
#define MAX_FILES 4096
static void (*statics[MAX_FILES])(void);
static int nstatics;

void cape_cc_add_statics(void (*fn)(void)) {
  if (nstatics == MAX_FILES) {
    fprintf(stderr, "cape: more than %d files translated with --ckpt=tickpt\n", MAX_FILES);
    abort();
  }
  statics[nstatics++] = fn;
}

/* TICKPT: block-scope static variables (cc.h's CAPE_CC_STATIC_LOCAL entries, from every
 * translated file; none: the weak bounds are 0). CAPE_TICKPT_STATIC_LOCALS=0: not registered
 * (the old way). */
extern const struct cape_cc_static_local __start_cape_cc_static_locals[] __attribute__((weak, visibility("hidden")));
extern const struct cape_cc_static_local __stop_cape_cc_static_locals[] __attribute__((weak, visibility("hidden")));

void cape_cc_share_statics(void) {
  for (int i = 0; i < nstatics; i++) statics[i]();
  const struct cape_cc_static_local *v = __start_cape_cc_static_locals, *end = __stop_cape_cc_static_locals;
  if (v == end) return;
  const char *off = getenv("CAPE_TICKPT_STATIC_LOCALS");
  if (off && strcmp(off, "0") == 0) return;
  for (; v < end; v++) cape_set_shared(v->addr, v->size);
}

int cape_cc_mine(int j) {
  int t = cape_cc_tid();
  if (t < 0) return 0;
  return j % team_size() == t;
}

/* The two-level model: section j is one of this node's threads'. */
int cape_cc_mt_mine(int j) {
  if (mt_nested) return 1;
  int tid = node_tid();
  if (tid < 0) return 0;
  int t = j % cur.nthreads;
  return t >= tid && t < tid + cape_cc_mt_threads();
}

/* Threadprivate variables in the single model (docs/translator.md, "threadprivate"). Every
 * node runs the sequential part, so a slave's variable follows the master thread's writes
 * there, while OpenMP gives the slave's thread its own copy: the initial value in its first
 * region, its own value from its previous region after. So a slave keeps its copies aside
 * (tp_own: a shared anonymous mapping, never tracked) and puts them in at each region's
 * fork; at the region's end the master copies its values into tp_mirror (the heap: it
 * travels with the region's checkpoint, under TICKPT too) and each slave takes its own
 * copies out and the master's values back, so its sequential part goes on as the master's.
 * tp_init and tp_mirror are written before main or by the master only: every node's heap
 * agrees. CAPE_CC_ALL_THREADPRIVATE=0: none of this (the old way). */
static unsigned long tp_total;
static unsigned char *tp_init, *tp_mirror;
static void **tp_addr;        /* every variable's address (the main thread's copy under mt) */
static unsigned long *tp_size;
static int tp_n, tp_n_static; /* entries; the first tp_n_static are static storage (registered) */
static __thread unsigned char *tp_own;
static __thread int tp_filled, tp_active, tp_registered;

/* Once, before the first distributed region's digest (its region_begin is processed before
 * the region's clause calls): the copies a slave puts in differ from the master's, so the
 * monitor must know them before it compares memory. Program-wide in the monitor (Fig. 6).
 * (The two-level model's copies are TLS, never tracked: nothing to register.) */
static void tp_register(void) {
  if (!tp_total || tp_registered) return;
  for (int i = 0; i < tp_n_static; i++) (cape_set_threadprivate)(tp_addr[i], tp_size[i]); /* (not cape1_cc.h's macro) */
  tp_registered = 1;
}

__attribute__((constructor)) static void tp_initial_values(void) {
  if (!cape_cc_all_threadprivates()) return;
  int n = 0;
  unsigned long total = 0;
  for (const struct cape_cc_tp *e = __start_cape_cc_tps; e < __stop_cape_cc_tps; e++) n++, total += e->size;
  for (const struct cape_cc_tpm *e = __start_cape_cc_tpm; e < __stop_cape_cc_tpm; e++) n++, total += e->size;
  if (!total) return;
  tp_addr = malloc(n * sizeof *tp_addr);
  tp_size = malloc(n * sizeof *tp_size);
  tp_init = malloc(total);
  tp_mirror = malloc(total);
  if (!tp_addr || !tp_size || !tp_init || !tp_mirror) abort();
  for (const struct cape_cc_tp *e = __start_cape_cc_tps; e < __stop_cape_cc_tps; e++)
    tp_addr[tp_n] = e->addr, tp_size[tp_n++] = e->size;
  tp_n_static = tp_n;
  /* Constructors run on the main thread: its TLS copies are the node's thread 0's. */
  for (const struct cape_cc_tpm *e = __start_cape_cc_tpm; e < __stop_cape_cc_tpm; e++)
    tp_addr[tp_n] = e->get(), tp_size[tp_n++] = e->size;
  unsigned long off = 0;
  for (int i = 0; i < tp_n; off += tp_size[i], i++) memcpy(tp_init + off, tp_addr[i], tp_size[i]);
  memcpy(tp_mirror, tp_init, total);
  tp_total = total;
}

/* The fork of a distributed region (every node, before its cape_start()): a slave's copies in. */
static void tp_fork(void) {
  tp_active = 0;
  if (!tp_total) return;
  if (!tp_own) { /* every node at the same fork: the maps stay alike */
    void *p = mmap(NULL, tp_total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      perror("cape: threadprivate copies");
      abort();
    }
    tp_own = p;
  }
  tp_active = 1;
  if (cape_master()) return;
  const unsigned char *from = tp_filled ? tp_own : tp_init;
  unsigned long off = 0;
  for (int i = 0; i < tp_n; off += tp_size[i], i++) memcpy(tp_addr[i], from + off, tp_size[i]);
}

int cape_cc_tp_initial(const void *addr, unsigned long size, void *out) {
  unsigned long off = 0;
  for (int i = 0; i < tp_n; off += tp_size[i], i++)
    if (tp_addr[i] == addr && tp_size[i] == size) {
      memmove(out, tp_init + off, size);
      return 1;
    }
  return 0;
}

void cape_cc_tp_out(void) {
  if (!tp_active || !cape_master()) return;
  unsigned long off = 0;
  for (int i = 0; i < tp_n; off += tp_size[i], i++) memcpy(tp_mirror + off, tp_addr[i], tp_size[i]);
}

/* A slave after the region's exchange: its copies out, the master's values in. */
static void tp_join(void) {
  if (!tp_active) return;
  tp_active = 0;
  if (cape_master()) return;
  unsigned long off = 0;
  for (int i = 0; i < tp_n; off += tp_size[i], i++) {
    memcpy(tp_own + off, tp_addr[i], tp_size[i]);
    memcpy(tp_addr[i], tp_mirror + off, tp_size[i]);
  }
  tp_filled = 1;
}

int cape_cc_all_threadprivates(void) {
  static int on = -1; /* read once, before the first window (never in a checkpoint: same on every node) */
  if (on < 0) {
    const char *s = getenv("CAPE_CC_ALL_THREADPRIVATE");
    on = !(s && s[0] == '0' && !s[1]);
  }
  return on;
}

int cape_cc_distributed(void) { return !mt_nested && cur.distributed && level == 1; }

void cape_cc_private(void *x, const void *orig, unsigned long size) {
  if (nprivs == MAX_PRIVATES) {
    fprintf(stderr, "cape: a parallel region with more than %d private variables\n", MAX_PRIVATES);
    abort();
  }
  privs[nprivs].addr = (unsigned char *)x;
  privs[nprivs].orig = (const unsigned char *)orig;
  privs[nprivs].size = size;
  nprivs++;
}

void cape_cc_region_shared(void *x, unsigned long size) {
  if (nshared == MAX_SHARED) {
    fprintf(stderr, "cape: a parallel region sharing more than %d local variables\n", MAX_SHARED);
    abort();
  }
  shared[nshared].addr = x;
  shared[nshared].size = size;
  nshared++;
  if (!cape1_team) cape_set_shared(x, size);
}

void cape_cc_orphan_keep(void) {
  /* The region's nodes beyond its team jumped over the call that reached this barrier (they
     wait at the region's end): the exchange would pair different constructs. Stop clearly. */
  if (level == 1 && cur.skipping) {
    fprintf(stderr,
            "cape: %s: a barrier (or worksharing construct) in a function this parallel region calls, "
            "with a team of %d threads smaller than the nodes: the nodes outside the team do not call it; "
            "run on %d nodes (cape run -n %d), or remove num_threads / omp_set_num_threads / OMP_NUM_THREADS\n",
            cur.skipping, cur.nthreads, cur.nthreads, cur.nthreads);
    exit(3);
  }
  unsigned long at = 0;
  for (int i = 0; i < nprivs; i++) {
    if (privs[i].size > sizeof kept - at) {
      fprintf(stderr,
              "cape: the private variables of a parallel region whose called functions have barriers "
              "exceed %d bytes (make the large ones shared, or local to the functions)\n",
              MAX_PRIVATE_BYTES);
      abort();
    }
    memcpy(kept + at, privs[i].addr, privs[i].size);
    memcpy(privs[i].addr, privs[i].orig, privs[i].size);
    at += privs[i].size;
  }
}

void cape_cc_orphan_back(void) {
  unsigned long at = 0;
  for (int i = 0; i < nprivs; i++) {
    memcpy(privs[i].addr, kept + at, privs[i].size);
    at += privs[i].size;
  }
  if (cape1_team) return;
  for (int i = 0; i < nshared; i++) cape_set_shared(shared[i].addr, shared[i].size);
  cape_cc_mt_reductions_again();
}

/* cc.h: the buffer is this thread's static TLS (never tracked, as the cape_lt_* copies), and
 * beyond its 64 KiB a shared anonymous mapping, grown by doubling (a heap block would be in
 * the checkpoint, and each node's scratch differs); --model=cape1's complete checkpoints
 * restore private memory only, so there the TLS is the limit. */
#define VLA_TLS_BYTES (64 * 1024)
static __thread unsigned char vla_tls[VLA_TLS_BYTES];
static __thread unsigned char *vla_buf;
static __thread unsigned long vla_cap, vla_top, vla_at;

void cape_cc_keep_bytes(void *x, unsigned long size) {
  if (!vla_buf) vla_buf = vla_tls, vla_cap = sizeof vla_tls;
  if (size > vla_cap - vla_top) {
    if (cape1_team) {
      fprintf(stderr, "cape: the variable-length arrays of a parallel region exceed %d bytes at a barrier "
                      "under --model=cape1: declare them before the region, or malloc them\n", VLA_TLS_BYTES);
      exit(3);
    }
    unsigned long cap = vla_cap;
    while (cap - vla_top < size) cap *= 2;
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      fprintf(stderr, "cape: no memory to keep a variable-length array of a parallel region (%lu bytes) "
                      "across a barrier\n", vla_top + size);
      abort();
    }
    memcpy(p, vla_buf, vla_top);
    if (vla_buf != vla_tls) munmap(vla_buf, vla_cap);
    vla_buf = (unsigned char *)p;
    vla_cap = cap;
  }
  memcpy(vla_buf + vla_top, x, size);
  memset(x, 0, size);
  vla_top += size;
}

void cape_cc_back_bytes(void *x, unsigned long size) {
  memcpy(x, vla_buf + vla_at, size);
  vla_at += size;
  if (vla_at >= vla_top) vla_at = vla_top = 0;  /* the barrier's last: the next one starts over */
}

/* The exchanges (cc.h): each follows the cape_create() its construct made in the user's
 * function; what they call captures nothing of the stack. Between their calls nothing reads
 * or writes the program's memory, so every call but the last of each run rides on the next
 * one's trap (cape_defer_next; issue 14: a master's 4 traps here become 1, a slave's 2 + 1
 * become 1 + 1); the last traps, for the code after it reads what it injected. */
static void master_update(int broadcast) {
  cape_defer_next();
  cape_stop();                /* Fig. 3 line 7 */
  cape_defer_next();
  cape_wait_for("after");     /* lines 8, 11: every slave's part merged into the master's */
  if (broadcast) cape_defer_next();
  cape_inject("after");       /* line 9 */
  if (broadcast)              /* line 10: !last_parallel() */
    cape_broadcast("after");  /* line 12 */
}

void cape_cc_end(int last) {
  if (cape1_team || (level > 0 && cape1_forked[level - 1] != -2 && cape1_forked[level - 1] != 0)) {
    cape1_end();
    return;
  }
  if (cape_cc_distributed()) {
    if (cape_master()) {
      master_update(!last);
    } else {
      cape_defer_next();
      cape_stop();                /* line 19 */
      if (!last) cape_defer_next(); /* (at the exit, the program's atexit handlers would run first) */
      cape_send("after", 0);      /* line 20 */
      if (last) cape_cc_exit();   /* lines 21, 25 */
      cape_receive("after");      /* line 22 */
      cape_inject("after");       /* line 23 */
    }
    tp_join();
  }
  cape_cc_join();
}

void cape_cc_barrier(void) {
  if (cape1_team) return cape1_cc_barrier();
  if (cape_master()) {
    master_update(1);
  } else {
    cape_defer_next();
    cape_stop();
    cape_defer_next();
    cape_send("after", 0);
    cape_receive("after");
    cape_inject("after");
  }
}

/* Whether cape_cc_deal() has dealt the slaves' shares of the current loop: TLS (never
 * tracked), 0 again once the master's own share is dealt. */
static __thread int dealt;

/* Every slave's share at once, one `before` for all of them (each slave reads its own
 * desc[node]): one create and its sends on one trap (the create rides on the sends:
 * cape_defer_next), where a create and a trap per slave were (issue 14: a master's 7
 * traps per empty region of 3 nodes become 5). */
int cape_cc_deal(cape_share_t *desc, cape_share_t *own, unsigned long long n, unsigned long long chunk) {
  int nodes = cape_num_nodes();
  if (!dealt && nodes > 1) {
    for (int s = 1; s < nodes; s++) cape_cc_share(&desc[s], n, chunk, cape_cc_thread_of_node(s));
    dealt = 1;
    cape_defer_next(); /* the caller's cape_create("before") */
    return 1;
  }
  dealt = 0;
  for (int i = 0; i < CAPE_CC_MAX_NODES; i++) desc[i] = (cape_share_t){0, 0, 0, 0};
  cape_cc_share(own, n, chunk, cape_cc_thread_of_node(0));
  return 0;
}

/* `before` to every slave; all but the last send ride on the last one's trap, which goes
 * at once: the master computes its own share next. */
void cape_cc_send_share(void) {
  int nodes = cape_num_nodes();
  for (int s = 1; s < nodes; s++) {
    if (s + 1 < nodes) cape_defer_next();
    cape_send("before", s);
  }
}

void cape_cc_receive_share(int then_start) {
  cape_receive("before");  /* Fig. 3 line 14 */
  if (then_start) cape_defer_next(); /* the caller's cape_start() is next: it carries both */
  cape_inject("before");   /* line 15 */
}

void cape_cc_my_share(cape_share_t *out, const cape_share_t *desc) { *out = desc[cape_node_id()]; }

/* The nodes deal themselves their shares (no `before`, issue 14): the trip count and chunk
 * join the determinism check (a node with other bounds would run other iterations). */
int cape_cc_fork_loop(int num_threads, int cond, int flags, const char *where, unsigned long long n,
                      unsigned long long chunk) {
  unsigned long long h = n * 0x9e3779b97f4a7c15ULL ^ (chunk + 0x632be59bd9b4e019ULL);
  fork_loop = h ? h : 1;
  return cape_cc_fork(num_threads, cond, flags, where);
}

void cape_cc_own_share(cape_share_t *out, unsigned long long n, unsigned long long chunk) {
  cape_cc_share(out, n, chunk, node_tid());
}

void cape_cc_exit(void) { exit(0); }

/* The OpenMP runtime API, answered for the current team (docs/translator.md). */
int omp_get_thread_num(void) {
  int t = cape_cc_tid();
  return t < 0 ? 0 : t;
}
int omp_get_num_threads(void) { return team_size(); }
int omp_get_max_threads(void) {
  if (level > 0 || cape1_cc_part() >= 0) return 1;
  return max_threads(cape1_mode ? cape1_cc_parts() : cape_num_nodes(), 0);
}
void omp_set_num_threads(int n) { requested = n > 0 ? n : 0; }
int omp_in_parallel(void) { return cur.nthreads > 1; /* also in a nested team of one */ }
int omp_get_num_procs(void) { return (cape1_mode ? cape1_cc_parts() : cape_num_nodes()) * mt_k; }
int omp_get_level(void) { return level + mt_nested; }
int omp_get_dynamic(void) { return 0; }
void omp_set_dynamic(int on) { (void)on; }
int omp_get_nested(void) { return 0; }
void omp_set_nested(int on) { (void)on; }
double omp_get_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
double omp_get_wtick(void) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Locks (docs/critical.md): the master's lock service, one lock per lock variable, inside a
 * distributed region; elsewhere one thread runs and there is nothing to exclude. A nest
 * lock's count is this node's (TLS, never tracked): the service sees its first set and its
 * last unset. */
#define MAX_NEST_LOCKS 64
static __thread struct {
  void *lock;
  int count;
} nest_locks[MAX_NEST_LOCKS];

static int *nest_count(void *l) {
  int free_slot = -1;
  for (int i = 0; i < MAX_NEST_LOCKS; i++) {
    if (nest_locks[i].lock == l && nest_locks[i].count > 0) return &nest_locks[i].count;
    if (free_slot < 0 && nest_locks[i].count == 0) free_slot = i;
  }
  if (free_slot < 0) {
    fprintf(stderr, "cape: more than %d nest locks held at once by one thread\n", MAX_NEST_LOCKS);
    abort();
  }
  nest_locks[free_slot].lock = l;
  return &nest_locks[free_slot].count;
}

void omp_init_lock(omp_lock_t *l) { (void)l; }
void omp_destroy_lock(omp_lock_t *l) { (void)l; }
void omp_set_lock(omp_lock_t *l) {
  if (cur.distributed) cape_lock_set(l);
}
void omp_unset_lock(omp_lock_t *l) {
  if (cur.distributed) cape_lock_unset(l);
}
int omp_test_lock(omp_lock_t *l) { return cur.distributed ? cape_lock_test(l) : 1; }
void omp_init_nest_lock(omp_nest_lock_t *l) { (void)l; }
void omp_destroy_nest_lock(omp_nest_lock_t *l) { (void)l; }
void omp_set_nest_lock(omp_nest_lock_t *l) {
  if (!cur.distributed) return;
  int *c = nest_count(l);
  if (*c == 0) cape_lock_set(l);
  ++*c;
}
void omp_unset_nest_lock(omp_nest_lock_t *l) {
  if (!cur.distributed) return;
  int *c = nest_count(l);
  if (*c > 0 && --*c == 0) cape_lock_unset(l);
}
/* `ordered` under --model=mt: the turn of iteration k is polled (cape_ordered_try) rather
 * than waited for in the monitor, which would keep the node's thread whose turn comes
 * first stopped at its own call (docs/critical.md, "Threads of a node"). */
void cape_cc_ordered_turn(const char *name, unsigned long long k) {
  long ns = 20000;
  while (!cape_ordered_try(name, k)) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, 0);
    if (ns < 1000000) ns *= 2;
  }
}
int omp_test_nest_lock(omp_nest_lock_t *l) {
  if (!cur.distributed) return 1;
  int *c = nest_count(l);
  if (*c > 0) return ++*c;
  if (!cape_lock_test(l)) return 0;
  return *c = 1;
}
