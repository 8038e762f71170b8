/* CAPE-1 for translated programs (include/cape/cape1_cc.h, docs/cape1.md): 003 Fig. 2 on
 * complete checkpoint files in a directory of the job's, one set of files per region and
 * step (a region's barriers split it into steps, each exchanged the same way). */
#define _GNU_SOURCE
#include <cape/cape.h>
#include <cape/cape1_cc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cape1_values.h"

/* Written by the master before each region's create(original): every part has them. */
static char cape1_dir[256];
static unsigned long cape1_region;
/* Regions entered and not left (TLS: each process's own; never merged): a region inside
 * another, at run time, runs serially in the part that meets it, as libgomp does. */
static __thread int cape1_depth;
/* This process's part of the current region (-1: none), the region's step (barriers met),
 * and the checkpoint this part's next diff is made against (Fig. 2's `original` at step 0,
 * the part's own merged state after a barrier). TLS: every part's own. */
static __thread int cape1_me = -1;
static __thread unsigned cape1_step;
static __thread char cape1_base[512];

/* The cape heap's windows (runtime/src/heap.h; libcape.a is linked with this file). Between a
 * region's fork and join each part allocates from its own arena and defers its frees of other
 * arenas' blocks, as a CAPE-2 node does inside a window, so two parts allocating or freeing
 * in one step (a qsort in a loop body: glibc's buffer) write different words of the heap, not
 * arena 0's header differently. CAPE1_PART_ARENAS=0: arena 0 for every part (the old way: two
 * parts allocating in one step are refused by the merge). */
void cape_heap_settle(int nodes);
void cape_heap_enter(int rank);
void cape_heap_leave(void);
static int part_arenas(void) {
  const char *e = getenv("CAPE1_PART_ARENAS");
  return !(e && strcmp(e, "0") == 0);
}
static __thread int cape1_in_arena; /* this part entered its arena (TLS: each part's own) */

int cape1_cc_parts(void) {
  int nodes = cape_num_nodes();
  if (nodes > 1) return nodes;
  if (cape_alone()) return 1; /* a forked process: no monitor to restart parts (cape.h) */
  const char *e = getenv("CAPE1_PARTS");
  int p = e ? atoi(e) : 3;
  return p < 1 ? 1 : p > CAPE1_MAX_PARTS ? CAPE1_MAX_PARTS : p;
}

int cape1_cc_part(void) { return cape1_depth == 1 ? cape1_me : -1; }
int cape1_cc_outside(void) { return cape1_depth == 0; }
int cape1_cc_nested(void) { return cape1_depth > 1; }

/* The directory of part k's files: under `cape run` a slave node's own (nodes may share a
 * file system; files travel between nodes under their names without the directory). */
static void part_dir(char *out, size_t size, int k) {
  if (k > 0 && cape_num_nodes() > 1)
    snprintf(out, size, "%s/n%d", cape1_dir, k);
  else
    snprintf(out, size, "%s", cape1_dir);
}

/* Names on the caller's stack: two parts writing one static buffer differently would be a
 * conflict in the merge. `what` of part k at this step, in the directory of part `in`. */
static void name(char *out, size_t size, const char *what, int k, int in) {
  char dir[272];
  part_dir(dir, sizeof dir, in);
  if (k >= 0)
    snprintf(out, size, "%s/r%lu.s%u.%s%d", dir, cape1_region, cape1_step, what, k);
  else
    snprintf(out, size, "%s/r%lu.s%u.%s", dir, cape1_region, cape1_step, what);
}

static void original_name(char *out, size_t size) { snprintf(out, size, "%s/r%lu.original", cape1_dir, cape1_region); }

/* The master's program ends: the slave nodes' programs, waiting in cape1_serve(), end too,
 * and the (empty) directory of the checkpoints goes. */
static void cape1_cc_end(void) {
  for (int k = 1; k < cape_num_nodes(); k++) cape1_restart_on(0, k);
  if (cape1_dir[0]) rmdir(cape1_dir);
}

int cape1_cc_fork(const char *where) {
  (void)where;
  if (cape1_depth++ > 0 || cape1_cc_parts() == 1) return -1; /* serially, here */
  /* `cape run -n N`: a slave node's program becomes each region's part there (the master
   * sends it `original`, restart_on); it never runs the rest of the program. */
  if (cape_num_nodes() > 1 && cape_node_id() != 0) {
    cape1_serve();
    _exit(0); /* the master's program ended */
  }
  static int end_registered;
  if (!end_registered) {
    end_registered = 1;
    atexit(cape1_cc_end);
  }
  if (!cape1_dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(cape1_dir, sizeof cape1_dir, "%s/cape1.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cape1_dir)) {
      perror("cape1: a directory for the checkpoints");
      exit(1);
    }
  }
  ++cape1_region;
  cape1_step = 0;
  cape1_values_begin();
  char original[512];
  original_name(original, sizeof original);
  snprintf(cape1_base, sizeof cape1_base, "%s", original);
  /* Every part's arena set up, and deferred frees settled, before `original`: the parts all
   * start from the same heap. */
  const int arenas = part_arenas();
  if (arenas) cape_heap_settle(cape1_cc_parts());
  if (cape_create_complete(original)) {
    for (int k = 1; k < cape1_cc_parts(); k++) cape1_restart_on(original, k);
    cape1_me = 0;
    if (arenas) {
      cape_heap_enter(0);
      cape1_in_arena = 1;
    }
    return 0;
  }
  /* A process restarted from `original` as part k: on another node, its own directory and
   * its own copy of the original (the base of its diffs and merges). */
  cape1_me = cape_node_id();
  if (cape_num_nodes() > 1) {
    char dir[272];
    mkdir(cape1_dir, 0700);
    part_dir(dir, sizeof dir, cape1_me);
    mkdir(dir, 0700);
    name(cape1_base, sizeof cape1_base, "base", cape1_me, cape1_me);
    cape1_copy(original, cape1_base);
  }
  if (arenas) {
    cape_heap_enter(cape1_me);
    cape1_in_arena = 1;
  }
  return cape1_me;
}

/* Files this part made at the step just exchanged (its target is its base now). */
static void unlink_own(int me, const char *old_base) {
  char f[512];
  name(f, sizeof f, "after", me, me);
  unlink(f);
  if (me != 0 && cape_num_nodes() > 1) { /* its own copy of its delta (the master has one) */
    name(f, sizeof f, "delta", me, me);
    unlink(f);
    name(f, sizeof f, "step", -1, me); /* its copy of the master's */
    unlink(f);
  }
  char original[512];
  original_name(original, sizeof original);
  if (strcmp(old_base, original) != 0) unlink(old_base);
}

/* The master's files of the step before this one: every part has used them by the time every
 * delta of this step is in. */
static void unlink_master_step(unsigned step, int parts) {
  unsigned now = cape1_step;
  cape1_step = step;
  char f[512];
  for (int k = 1; k < parts; k++) {
    name(f, sizeof f, "delta", k, 0);
    unlink(f);
  }
  name(f, sizeof f, "delta", 0, 0);
  unlink(f);
  name(f, sizeof f, "step", -1, 0);
  unlink(f);
  cape1_step = now;
}

/* One exchange (Fig. 2's create(after), diff, merge, restart), at a barrier (`end` 0: every
 * part goes on from its own state with the others' changes of shared memory) or at the
 * region's end (`end` 1: the other parts end, the master goes on with every change). */
static void exchange(int me, int end) {
  int parts = cape1_cc_parts();
  char after[512], delta[512], target[512], step[512], old_base[512];
  name(after, sizeof after, "after", me, me);
  name(delta, sizeof delta, "delta", me, me);
  name(target, sizeof target, "target", me, me);
  name(step, sizeof step, "step", -1, me);
  snprintf(old_base, sizeof old_base, "%s", cape1_base);
  cape1_values_out(me, end);
  if (cape_create_complete(after)) {
    cape1_diff(cape1_base, after, delta);
    if (me != 0 && end) { /* a part's process ends once its delta is there (sent, on a node) */
      unlink(after);
      if (cape_num_nodes() > 1) {
        char dir[272], original[512];
        original_name(original, sizeof original);
        if (strcmp(cape1_base, original) != 0) unlink(cape1_base);
        unlink(delta); /* sent: the master has its own copy */
        part_dir(dir, sizeof dir, me);
        rmdir(dir);
        cape1_serve(); /* the next region's part, or the end */
        /* The end. The master's rmdir may have come before this part's directory went (local
         * nodes share the directory; a remote node has its own): the last one out removes it. */
        rmdir(cape1_dir);
      }
      _exit(0);
    }
    cape1_copy(after, target);
    if (me == 0) {
      char d[512];
      for (int k = 1; k < parts; k++) {
        name(d, sizeof d, "delta", k, 0);
        cape1_wait_for(d);
        cape1_merge(target, d);
      }
      cape1_merge(target, delta); /* its own, last: its registers and frames */
      if (cape1_step > 0) unlink_master_step(cape1_step - 1, parts);
      if (!end) {
        cape1_diff(cape1_base, target, step); /* the step's changes, for every other part */
        for (int k = 1; k < parts; k++) cape1_send(step, k);
      }
    } else {
      cape1_wait_for(step);
      cape1_merge(target, step);  /* the others' changes of shared memory */
      cape1_merge(target, delta); /* its own, last */
    }
    cape1_restart(target); /* continues below, from create(after) answering 0 */
  }
  /* From target: the part's state after the exchange, the base of its next diff. */
  unlink_own(me, old_base);
  snprintf(cape1_base, sizeof cape1_base, "%s", target);
  cape1_values_in(me, end);
  cape1_step++;
}

void cape1_cc_barrier(void) {
  if (cape1_depth != 1 || cape1_me < 0) return; /* a serial region: a team of one */
  exchange(cape1_me, 0);
}

void cape1_cc_join(int me) {
  int parts = cape1_cc_parts();
  if (me < 0) { /* a serial region */
    if (--cape1_depth == 0) cape_unmark_frame();
    return;
  }
  exchange(me, 1);
  if (cape1_in_arena) { /* the master, with every part's blocks: the deferred frees at its next allocator call */
    cape1_in_arena = 0;
    cape_heap_leave();
  }
  cape1_depth--;
  cape1_me = -1;
  /* The master, from target: the region's files are done with (alone, the other parts'
   * last bases too: the master's merges read them as the base of the three-way rule). */
  char f[512];
  original_name(f, sizeof f);
  unlink(f);
  unlink(cape1_base);
  unlink_master_step(cape1_step - 1, parts);
  unsigned steps = cape1_step;
  for (cape1_step = 0; cape1_step < steps; cape1_step++)
    for (int k = 1; k < parts; k++) {
      name(f, sizeof f, "target", k, k);
      unlink(f);
    }
  cape_unmark_frame();
}

void cape1_cc_share(cape_share_t *out, unsigned long long n, unsigned long long chunk, int me) {
  if (me < 0) { /* serially: every iteration */
    out->lo = 0;
    out->hi = n;
    out->chunk = n ? n : 1;
    out->stride = out->chunk;
    return;
  }
  unsigned long long p = (unsigned long long)cape1_cc_parts(), t = (unsigned long long)me;
  if (chunk == 0) {
    unsigned long long q = n / p, r = n % p; /* the first r parts get one more, like libgomp */
    out->lo = t * q + (t < r ? t : r);
    out->hi = out->lo + q + (t < r);
    out->chunk = out->hi > out->lo ? out->hi - out->lo : 1;
    out->stride = out->chunk;
  } else {
    out->lo = t * chunk;
    out->hi = n;
    out->chunk = chunk;
    out->stride = p * chunk;
  }
}

int cape1_cc_mine(int j, int me) { return me < 0 || j % cape1_cc_parts() == me; }
