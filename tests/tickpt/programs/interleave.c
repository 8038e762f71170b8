/* Neighbouring elements written by different nodes (`schedule(static, 1)`): node k writes
 * the ints and bytes with index % nodes == k, so every 8-byte word holds values from two or
 * more nodes. Checkpoint runs carry unchanged bytes between changed words, so the parts
 * overlap; the master's three-way merge (base = its DATA-0) must keep every node's values.
 * Prints "ints=<sum> bytes=<sum> bad=<count>". Argument: tickpt|dickpt. */
#include <stdio.h>
#include "template.h"

#define N 1000
static int v[N];
static unsigned char c[N];

static void clauses(void) {
  cape_set_shared(v, sizeof v);
  cape_set_shared(c, sizeof c);
}
static void body(int lo, int hi) {
  (void)lo;
  (void)hi;
  int me = cape_node_id(), nodes = cape_num_nodes();
  for (int i = me; i < N; i += nodes) {
    v[i] = 3 * i + 1;
    c[i] = (unsigned char)(i % 251 + 1);
  }
}

int main(int argc, char **argv) {
  tpl_model(argc, argv);
  tpl_for(N, clauses, body, 0);
  long si = 0, sc = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    si += v[i];
    sc += c[i];
    bad += v[i] != 3 * i + 1 || c[i] != i % 251 + 1;
  }
  printf("ints=%ld bytes=%ld bad=%d\n", si, sc, bad);
  return 0;
}
