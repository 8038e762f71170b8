/* CAPE-1 for translated programs (include/cape/cape1_cc.h, docs/cape1.md): 003 Fig. 2 on
 * complete checkpoint files in a directory of the job's, one set of files per region. */
#define _GNU_SOURCE
#include <cape/cape.h>
#include <cape/cape1_cc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Written by the master before each region's create(original): every part has them. */
static char cape1_dir[256];
static unsigned long cape1_region;
/* Regions entered and not left (TLS: each process's own; never merged): a region inside
 * another, at run time, runs serially in the part that meets it, as libgomp does. */
static __thread int cape1_depth;

int cape1_cc_parts(void) {
  int nodes = cape_num_nodes();
  if (nodes > 1) return nodes;
  const char *e = getenv("CAPE1_PARTS");
  int p = e ? atoi(e) : 3;
  return p < 1 ? 1 : p > 64 ? 64 : p;
}

/* Names on the caller's stack: two parts writing one static buffer differently would be a
 * conflict in the merge. */
static void name(char *out, size_t size, const char *what, int k) {
  if (k >= 0)
    snprintf(out, size, "%s/r%lu.%s%d", cape1_dir, cape1_region, what, k);
  else
    snprintf(out, size, "%s/r%lu.%s", cape1_dir, cape1_region, what);
}

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
  char original[320], target[320];
  name(original, sizeof original, "original", -1);
  name(target, sizeof target, "target", -1);
  if (cape_create_complete(original)) {
    cape1_copy(original, target);
    for (int k = 1; k < cape1_cc_parts(); k++) cape1_restart_on(original, k);
    return 0;
  }
  /* A process restarted from `original` as part k: on another node, its directory. */
  if (cape_num_nodes() > 1) mkdir(cape1_dir, 0700);
  return cape_node_id();
}

void cape1_cc_join(int me) {
  int parts = cape1_cc_parts();
  if (me < 0) { /* a serial region */
    cape1_depth--;
    return;
  }
  char original[320], target[320], after[320], delta[320];
  name(original, sizeof original, "original", -1);
  name(target, sizeof target, "target", -1);
  name(after, sizeof after, "after", me);
  name(delta, sizeof delta, "delta", me);
  if (cape_create_complete(after)) {
    cape1_diff(original, after, delta);
    if (me != 0) { /* a part's process ends once its delta is there (sent, on a node) */
      if (cape_num_nodes() > 1) {
        unlink(after);
        cape1_serve(); /* the next region's part, or the end */
      }
      _exit(0);
    }
    for (int k = 1; k < parts; k++) {
      name(delta, sizeof delta, "delta", k);
      cape1_wait_for(delta);
      cape1_merge(target, delta);
    }
    name(delta, sizeof delta, "delta", 0);
    cape1_merge(target, delta);
    cape1_restart(target); /* continues below, from create(after0) answering 0 */
  }
  cape1_depth--;
  /* The master, from target: the region's files are done with. */
  unlink(original);
  unlink(target);
  for (int k = 0; k < parts; k++) {
    name(after, sizeof after, "after", k);
    name(delta, sizeof delta, "delta", k);
    unlink(after);
    unlink(delta);
  }
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
