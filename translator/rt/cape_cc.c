/* libcape_cc: team bookkeeping and the OpenMP API for programs translated by cape-cc.
 *
 * State lives in this library's static data (the program's tracked memory). It is written
 * only between a region's cape_stop() and the next cape_start(), or restored to its exact
 * bytes before the next create(), so no checkpoint ever carries it (docs/translator.md,
 * "Template bookkeeping"). Every node computes the same values except `tid`.
 */
#include "cape/cc.h"
#include "cape/omp/omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct team {
  int distributed; /* the region runs on the nodes (checkpoints are exchanged) */
  int nthreads;    /* OpenMP team size */
  int tid;         /* this node's thread number, -1 when it has no share */
  int master_idle; /* threads are nodes 1..N-1 (001 Fig. 3 exactly) */
};

static struct team cur = {0, 1, 0, 0};
static int level;           /* parallel regions entered and not left (nesting depth) */
static int requested;       /* omp_set_num_threads, 0 = not set */

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
  int want = requested ? requested : env_threads();
  return want > 0 && want < avail ? want : avail;
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

/* Saved outer teams for serialized nested regions. */
#define MAX_LEVELS 64
static struct team saved[MAX_LEVELS];

int cape_cc_fork(int num_threads, int cond, int flags, const char *where) {
  int master_idle = (flags & CAPE_CC_MASTER_IDLE) != 0;
  if (level >= MAX_LEVELS) {
    fprintf(stderr, "cape: parallel regions nested deeper than %d\n", MAX_LEVELS);
    abort();
  }
  saved[level] = cur;
  int outer_level = level++;
  if (outer_level > 0 || !cond) {
    /* Nested (nesting is off, as by default in OpenMP) or if(false): a team of one. */
    cur = (struct team){0, 1, 0, 0};
    return 0;
  }
  /* Every node is here with the same memory (the determinism check: cape.h). */
  int nodes = cape_region_begin(where);
  if (nodes > CAPE_CC_MAX_NODES) {
    fprintf(stderr, "cape: %d nodes, translated code supports at most %d\n", nodes,
            CAPE_CC_MAX_NODES);
    abort();
  }
  int t = max_threads(nodes, master_idle && nodes > 1);
  if (num_threads > 0 && num_threads < t) t = num_threads;
  if (flags & CAPE_CC_WHOLE_TEAM) {
    /* A `parallel` region: every node, or the first num_threads nodes (the others run
       the region's worksharing constructs with no share and skip the rest, which the
       translation makes them jump over). */
    int avail = master_idle ? nodes - 1 : nodes;
    t = num_threads > 0 && num_threads < avail ? num_threads : avail;
  }
  if (nodes == 1) {
    cur = (struct team){0, 1, 0, 0};
    return 0;
  }
  cur.distributed = 1;
  cur.nthreads = t;
  cur.master_idle = master_idle;
  cur.tid = cape_cc_thread_of_node(cape_node_id());
  return 1;
}

void cape_cc_join(void) {
  if (level == 1) nprivs = nshared = 0;
  if (level > 0) {
    cur = saved[--level];
    saved[level] = (struct team){0, 0, 0, 0}; /* back to its bytes before the fork */
  }
}

int cape_cc_tid(void) { return cur.tid; }

int cape_cc_thread_of_node(int node) {
  if (!cur.distributed) return node == 0 ? 0 : -1;
  int t = cur.master_idle ? node - 1 : node;
  return t >= 0 && t < cur.nthreads ? t : -1;
}

void cape_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int thread) {
  cape_share_t s = {0, 0, 1, 1};
  unsigned long long nt = (unsigned long long)cur.nthreads;
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
  if (cur.tid < 0) return 0;
  cape_cc_share(&s, n, chunk, cur.tid);
  return cape_cc_last(&s, n) ? (unsigned long long)cur.nthreads : (unsigned long long)cur.tid;
}

unsigned long long cape_cc_order_of_section(int nsections) {
  if (cur.tid < 0) return 0;
  return cape_cc_mine(nsections - 1) ? (unsigned long long)cur.nthreads : (unsigned long long)cur.tid;
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

void cape_cc_share_statics(void) {
  for (int i = 0; i < nstatics; i++) statics[i]();
}

int cape_cc_mine(int j) {
  if (cur.tid < 0) return 0;
  return j % cur.nthreads == cur.tid;
}

int cape_cc_distributed(void) { return cur.distributed && level == 1; }

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
  cape_set_shared(x, size);
}

void cape_cc_orphan_keep(void) {
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
  for (int i = 0; i < nshared; i++) cape_set_shared(shared[i].addr, shared[i].size);
}

/* The exchanges (cc.h): each follows the cape_create() its construct made in the user's
 * function; what they call captures nothing of the stack. */
void cape_cc_end(int last) {
  if (cape_cc_distributed()) {
    if (cape_master()) {
      cape_stop();                /* Fig. 3 line 7 */
      cape_wait_for("after");     /* lines 8, 11: every slave's part merged into the master's */
      cape_inject("after");       /* line 9 */
      if (!last)                  /* line 10: !last_parallel() */
        cape_broadcast("after");  /* line 12 */
    } else {
      cape_stop();                /* line 19 */
      cape_send("after", 0);      /* line 20 */
      if (last) cape_cc_exit();   /* lines 21, 25 */
      cape_receive("after");      /* line 22 */
      cape_inject("after");       /* line 23 */
    }
  }
  cape_cc_join();
}

void cape_cc_barrier(void) {
  cape_stop();
  if (cape_master()) {
    cape_wait_for("after");
    cape_inject("after");
    cape_broadcast("after");
  } else {
    cape_send("after", 0);
    cape_receive("after");
    cape_inject("after");
  }
}

/* The slave cape_cc_deal() is at: TLS (never tracked), and 0 again once all are dealt. */
static __thread int dealt;

int cape_cc_deal(cape_share_t *desc, cape_share_t *own, unsigned long long n, unsigned long long chunk) {
  if (++dealt < cape_num_nodes()) {
    cape_cc_share(&desc[dealt], n, chunk, cape_cc_thread_of_node(dealt));
    return 1;
  }
  dealt = 0;
  for (int i = 0; i < CAPE_CC_MAX_NODES; i++) desc[i] = (cape_share_t){0, 0, 0, 0};
  cape_cc_share(own, n, chunk, cape_cc_thread_of_node(0));
  return 0;
}

void cape_cc_send_share(void) { cape_send("before", dealt); }

void cape_cc_receive_share(void) {
  cape_receive("before");  /* Fig. 3 line 14 */
  cape_inject("before");   /* line 15 */
}

void cape_cc_my_share(cape_share_t *out, const cape_share_t *desc) { *out = desc[cape_node_id()]; }

void cape_cc_exit(void) { exit(0); }

/* The OpenMP runtime API, answered for the current team (docs/translator.md). */
int omp_get_thread_num(void) { return cur.tid < 0 ? 0 : cur.tid; }
int omp_get_num_threads(void) { return cur.nthreads; }
int omp_get_max_threads(void) {
  if (level > 0) return 1;
  return max_threads(cape_num_nodes(), 0);
}
void omp_set_num_threads(int n) { requested = n > 0 ? n : 0; }
int omp_in_parallel(void) { return cur.nthreads > 1; }
int omp_get_num_procs(void) { return cape_num_nodes(); }
int omp_get_level(void) { return level; }
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
int omp_test_nest_lock(omp_nest_lock_t *l) {
  if (!cur.distributed) return 1;
  int *c = nest_count(l);
  if (*c > 0) return ++*c;
  if (!cape_lock_test(l)) return 0;
  return *c = 1;
}
