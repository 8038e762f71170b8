/* Dynamic memory is shared (002 Sect. 3.1): blocks from malloc, small ([heap]) and large
 * (an anonymous mmap), travel without any clause call under both models, unless
 * registered private: `scratch` is written by every node and keeps its value.
 * Prints "small=<sum> large=<sum> scratch=<value>". With "misuse" as argument 2, a clause
 * call inside start() ... stop() (an error the monitor reports). Arguments: tickpt|dickpt
 * [misuse]. */
#include <stdio.h>
#include <stdlib.h>
#include "template.h"

#define N 1000
#define BIG (1 << 18) /* longs: 2 MiB, beyond malloc's mmap threshold */
static long *small, *large, *scratch;

static void clauses(void) { cape_set_private(scratch, 16 * sizeof *scratch); }
static void body(int lo, int hi) {
  for (int i = lo; i < hi; ++i) {
    small[i] = (long)i * i;
    scratch[i % 16] = cape_node_id() + 100;
  }
  for (long k = (long)lo * BIG / N; k < (long)hi * BIG / N; ++k) large[k] = k + 1;
}

int main(int argc, char **argv) {
  tpl_model(argc, argv);
  small = calloc(N, sizeof *small);
  large = calloc(BIG, sizeof *large);
  scratch = calloc(16, sizeof *scratch);
  for (int k = 0; k < 16; ++k) scratch[k] = 7;
  if (argc > 2 && argv[2][0] == 'm') {
    cape_start();
    cape_set_shared(small, N * sizeof *small);
    return 0;
  }
  tpl_for(N, clauses, body, 0);
  long s = 0, l = 0, bad = 0;
  for (int i = 0; i < N; ++i) s += small[i];
  long first_bad = -1;
  for (long k = 0; k < BIG; ++k) {
    l += large[k];
    if (large[k] != k + 1 && first_bad < 0) first_bad = k;
  }
  if (first_bad >= 0) printf("large[%ld] = %ld\n", first_bad, large[first_bad]);
  for (int k = 0; k < 16; ++k) bad += scratch[k] != 7;
  printf("small=%ld large=%ld scratch=%ld bad=%ld\n", s, l, scratch[0], bad);
  return 0;
}
