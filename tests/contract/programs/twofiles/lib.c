/* The second file of a two-file program: regions and the functions main.c's regions call. */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#include "lib.h"

static long lib_counter;   /* a static of this file, written inside regions */

struct cell *lib_cell(long v, struct cell *next) {
  struct cell *c = malloc(sizeof *c + (size_t)(v % 300));
  if (!c) exit(2);
  c->v = v;
  c->next = next;
  return c;
}

long lib_walk(const struct cell *c) {
  long s = 0;
  for (; c; c = c->next) s = s * 3 % 1000003 + c->v;
  return s;
}

void lib_print(int round) {
#pragma omp parallel
  {
    printf("lib.c: round %d, thread %d of %d\n", round, omp_get_thread_num(), omp_get_num_threads());
#pragma omp single
    lib_counter += round + 1;
  }
  printf("lib.c: counter %ld\n", lib_counter);
}

struct cell *lib_list_in_single(int n) {
  struct cell *head = NULL;
#pragma omp parallel
  {
#pragma omp single
    for (int k = 0; k < n; k++) head = lib_cell(k * 7, head);
  }
  return head;
}

long lib_local(long k) {
  long x = 0;
  int y = 0;
#pragma omp parallel
  {
#pragma omp master
    x = k * 11;
#pragma omp single
    y = (int)k + 5;
  }
  return x + y;
}
