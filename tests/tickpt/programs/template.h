/* The parallel-for template of 001_3036025dc34c4021.txt Fig. 3 with the clause calls of
 * 002_2c61c2cb27f62a9a.txt Fig. 7 before cape_start(), written by hand as the translator
 * will lower `#pragma omp parallel for CLAUSES`. Unlike Fig. 3 the master computes a share
 * too (chunk 0, or the last chunk with `master_last`), so its part is merged in: it
 * creates "after" before wait_for("after") merges the slaves' parts into it.
 *
 *   tpl_for(n, clauses, body, master_last)
 *
 * `clauses` makes the cape_set_* / cape_reduction calls; `body(lo, hi)` runs iterations
 * [lo, hi). Node k runs chunk k ([k*n/nodes, (k+1)*n/nodes)), or chunk k-1 with the master
 * on the last one (then every node states its chunk's order with cape_set_order, which
 * lastprivate needs). Without NATIVE only. */
#ifndef TICKPT_TEMPLATE_H
#define TICKPT_TEMPLATE_H
#include <cape/cape.h>

static int tpl_lo, tpl_hi; /* a slave's chunk: shared, travels in "before" */
static int tpl_x;

static void tpl_for(int n, void (*clauses)(void), void (*body)(int, int), int master_last) {
  int nodes = cape_num_nodes();
  if (cape_master()) {
    clauses();
    cape_set_shared(&tpl_lo, sizeof tpl_lo);
    cape_set_shared(&tpl_hi, sizeof tpl_hi);
    if (master_last) cape_set_order(nodes - 1);
    cape_start();
    for (tpl_x = 1; tpl_x < nodes; ++tpl_x) {
      int c = master_last ? tpl_x - 1 : tpl_x;
      tpl_lo = (int)((long)c * n / nodes);
      tpl_hi = (int)((long)(c + 1) * n / nodes);
      cape_create("before");
      cape_send("before", tpl_x);
    }
    int c = master_last ? nodes - 1 : 0;
    tpl_lo = (int)((long)c * n / nodes);
    tpl_hi = (int)((long)(c + 1) * n / nodes);
    body(tpl_lo, tpl_hi);
    cape_create("after");
    cape_stop();
    cape_wait_for("after");
    cape_inject("after");
    cape_broadcast("after");
  } else {
    cape_receive("before");
    cape_inject("before");
    clauses();
    cape_set_shared(&tpl_lo, sizeof tpl_lo);
    cape_set_shared(&tpl_hi, sizeof tpl_hi);
    if (master_last) cape_set_order(cape_node_id() - 1);
    cape_start();
    body(tpl_lo, tpl_hi);
    cape_create("after");
    cape_stop();
    cape_send("after", 0);
    cape_receive("after");
    cape_inject("after");
  }
}

/* "tickpt" or "dickpt" (default) from argv[1]. */
static int tpl_model(int argc, char **argv) {
  int m = CAPE_CKPT_DICKPT;
  if (argc > 1 && argv[1][0] == 't') m = CAPE_CKPT_TICKPT;
  cape_set_ckpt_model(m);
  return m;
}
#endif
