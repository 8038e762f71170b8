/* Allocating, freeing and printing inside windows and outside, under `cape monitor` (one
 * node): the window is the master's part of 001_3036025dc34c4021.txt Fig. 3 written by hand
 * (cape_start ... create("after"), stop, wait_for, inject), since cape-cc runs regions
 * serially on one node. Built with -DNATIVE the window is an OpenMP parallel region, and
 * with OMP_NUM_THREADS=1 the output must be the same (tests/runtime/runtime_test.cpp).
 * Without NATIVE it also says on stderr where stdout's buffer is, so the test can check
 * that no checkpoint carries it. Argument: tickpt|dickpt (the checkpoint model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef NATIVE
#define WINDOW_BEGIN _Pragma("omp parallel") {
#define WINDOW_END }
#else
#include <cape/cape.h>
#define WINDOW_BEGIN \
  cape_start();      \
  {
#define WINDOW_END        \
  }                       \
  cape_create("after");   \
  cape_stop();            \
  cape_wait_for("after"); \
  cape_inject("after");
#endif

#define ROUNDS 6
struct node {
  struct node *next;
  long v;
  char pad[];
};
static struct node *head;
static long *big;
static size_t big_n;
static char *maps[ROUNDS];
static char *seq_blocks[ROUNDS * 10];

static long list_sum(void) {
  long s = 0;
  for (struct node *n = head; n; n = n->next) s += n->v;
  return s;
}

int main(int argc, char **argv) {
#ifndef NATIVE
  cape_set_ckpt_model(argc > 1 && argv[1][0] == 't' ? CAPE_CKPT_TICKPT : CAPE_CKPT_DICKPT);
#else
  (void)argc;
  (void)argv;
#endif
  for (int k = 0; k < ROUNDS * 10; k++) {
    seq_blocks[k] = malloc(100 + (size_t)k * 50);
    memset(seq_blocks[k], k, 100 + (size_t)k * 50);
  }
  printf("start\n");
  for (int round = 0; round < ROUNDS; round++) {
    WINDOW_BEGIN
      for (int k = 0; k < 20; k++) {
        struct node *n = malloc(sizeof *n + (size_t)(k * 37 % 300));
        n->v = round * 100 + k;
        n->next = head;
        head = n;
      }
      /* more than a node arena's first commit: it grows inside the window */
      size_t want = (size_t)(round + 1) * 40000;
      big = realloc(big, want * sizeof *big);
      for (size_t i = big_n; i < want; i++) big[i] = (long)i;
      big_n = want;
      long *z = calloc(1000, sizeof *z);
      long zs = 0;
      for (int i = 0; i < 1000; i++) zs += z[i];
      free(z);
      maps[round] = mmap(0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      memset(maps[round], round + 1, 65536);
      for (int k = round * 10; k < round * 10 + 10; k++) { /* the sequential part's: deferred */
        free(seq_blocks[k]);
        seq_blocks[k] = 0;
      }
      printf("round %d in the window: list %ld calloc %ld\n", round, list_sum(), zs);
      for (int i = 0; i < 300; i++) /* more than stdout's buffer (8 KiB) */
        printf("line %d.%03d of the window's output, long enough to fill the buffer\n", round, i);
    WINDOW_END
    long bs = 0;
    for (size_t i = 0; i < big_n; i++) bs += big[i];
    long ms = 0;
    for (int r = 0; r <= round; r++)
      if (maps[r]) ms += maps[r][r * 1000];
    printf("round %d after: list %ld big %ld maps %ld\n", round, list_sum(), bs, ms);
    if (round > 0) {
      munmap(maps[round - 1], 65536);
      maps[round - 1] = 0;
    }
    /* drop every other list node (blocks of node 0's arena, freed in the sequential part) */
    for (struct node **p = &head; *p;) {
      if ((*p)->v % 2) {
        struct node *d = *p;
        *p = d->next;
        free(d);
      } else {
        p = &(*p)->next;
      }
    }
    char *s = malloc(32); /* the sequential part allocates too (arena 0) */
    snprintf(s, 32, "%ld", list_sum());
    printf("round %d kept %s\n", round, s);
    free(s);
  }
  fflush(stdout);
#ifndef NATIVE
  fprintf(stderr, "stdout-buffer %p %ld\n", (void *)stdout->_IO_buf_base,
          (long)(stdout->_IO_buf_end - stdout->_IO_buf_base));
#endif
  return 0;
}
