/* Bernstein's conditions (002 Sect. 2.1.2): with "racy" every node writes its own value to
 * the shared `flag` without a reduction (a race `--check-races` must report, naming
 * `flag`); with "clean" every node writes only its own byte of the shared `bytes` (two
 * nodes write neighbouring bytes of one word: not a race) and adds to a reduction
 * variable. Prints "flag=... bytes=... total=...". Arguments: tickpt|dickpt racy|clean. */
#include <stdio.h>
#include "template.h"

static int racy;
static int flag;
static unsigned char bytes[8];
static long total;

static void clauses(void) {
  cape_set_shared(&flag, sizeof flag);
  cape_set_shared(bytes, sizeof bytes);
  cape_reduction(&total, sizeof total, CAPE_RED_ADD, CAPE_T_INT64);
}
static void body(int lo, int hi) {
  int me = cape_node_id();
  if (racy) flag = me + 1;
  bytes[me] = (unsigned char)(0x10 + me);
  for (int i = lo; i < hi; ++i) total += i;
}

int main(int argc, char **argv) {
  tpl_model(argc, argv);
  racy = argc > 2 && argv[2][0] == 'r';
  tpl_for(300, clauses, body, 0);
  printf("flag=%d bytes=%02x%02x%02x total=%ld\n", flag, bytes[0], bytes[1], bytes[2], total);
  return 0;
}
