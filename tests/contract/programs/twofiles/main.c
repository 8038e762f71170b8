/* A program of two files: main.c's loop bodies call functions of lib.c that allocate;
 * lib.c holds regions that print, allocate in `single` and share locals. */
#include <stdio.h>
#include "lib.h"

#define N 40
static struct cell *chain[N];
static long seen[N];

int main(void) {
  lib_print(0);
  struct cell *head = lib_list_in_single(500);
  long local = 0;
  for (int k = 0; k < 3; k++) local += lib_local(k + 1);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < N; i++) {
    for (int k = 0; k <= i % 9; k++) chain[i] = lib_cell(i * 100 + k, chain[i]);
    seen[i] = lib_walk(head) + local;
  }
  lib_print(1);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < N; i++) seen[i] = seen[i] * 7 + lib_walk(chain[(i + N / 2) % N]);
  for (int i = 0; i < N; i++) printf("main.c: seen[%d] = %ld\n", i, seen[i]);
  printf("main.c: list %ld, locals %ld\n", lib_walk(head), local);
  return 0;
}
