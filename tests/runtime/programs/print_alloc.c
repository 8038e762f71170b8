/* An ordinary OpenMP program: reads numbers from stdin, prints inside regions (more than
 * stdout's buffer holds), allocates in `single` and `master`, grows a block with realloc,
 * prints after. Built with cape-cc and run under `cape monitor` (one node), its output must
 * equal gcc -fopenmp's with OMP_NUM_THREADS=1 (tests/runtime/runtime_test.cpp). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
  struct item *next;
  long v;
};

int main(void) {
  long sum = 0, x;
  int count = 0;
  while (scanf("%ld", &x) == 1) {
    sum += x;
    count++;
  }
  printf("read %d numbers, sum %ld\n", count, sum);
  struct item *list = NULL;
  long *grow = NULL;
  for (int round = 0; round < 4; round++) {
#pragma omp parallel
    {
      printf("hello from thread %d of %d in round %d\n", omp_get_thread_num(), omp_get_num_threads(), round);
#pragma omp single
      {
        for (int k = 0; k < 30; k++) {
          struct item *it = malloc(sizeof *it + (size_t)(k * 53 % 500));
          it->v = round * 1000 + k;
          it->next = list;
          list = it;
        }
        grow = realloc(grow, (size_t)(round + 1) * 300000 * sizeof *grow);
        for (long i = (long)round * 300000; i < (long)(round + 1) * 300000; i++) grow[i] = i % 11;
      }
#pragma omp master
      {
        char *msg = malloc(64);
        snprintf(msg, 64, "master's note %d", round);
        for (int i = 0; i < 200; i++) printf("%s, line %d\n", msg, i);
        free(msg);
      }
    }
    long s = 0, g = 0;
    for (struct item *it = list; it; it = it->next) s += it->v;
    for (long i = 0; i < (long)(round + 1) * 300000; i++) g += grow[i];
    printf("round %d: list %ld grow %ld\n", round, s, g);
  }
  while (list) {
    struct item *n = list->next;
    free(list);
    list = n;
  }
  free(grow);
  printf("done\n");
  return 0;
}
