/* libcape_cc: team bookkeeping and the OpenMP API for programs translated by cape-cc.
 *
 * State lives in this library's static data (the program's tracked memory). It is written
 * only between a region's cape_stop() and the next cape_start(), or restored to its exact
 * bytes before the next create(), so no checkpoint ever carries it (docs/translator.md,
 * "Template bookkeeping"). Every node computes the same values except `tid`.
 */
#include "cape/cc.h"

#include <stdio.h>
#include <stdlib.h>
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
