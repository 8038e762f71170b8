/* Critical sections everywhere in a region: in master, single and sections too (one thread
 * runs each, but others run the same named critical at the same time), nested critical
 * sections with different names, and in functions the region calls (one adding to the
 * caller's local through a pointer). */
#include <omp.h>
#include <stdio.h>

long total, inner_total, calls;
long log_[64];

/* Adds to the caller's local through a pointer, under critical. */
static void add_to(long *sum, long v) {
#pragma omp critical(add)
  *sum += v;
}

static void note(int t) {
#pragma omp critical(calls)
  {
    log_[calls % 64] = t + 1;
    calls++;
  }
}

int main(void) {
  long by_pointer = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    add_to(&by_pointer, t + 1);
#pragma omp critical
    total += 1;
#pragma omp master
    {
#pragma omp critical
      total += 100;
    }
#pragma omp single
    {
#pragma omp critical
      total += 1000;
    }
#pragma omp critical(outer)
    {
      total += 10000;
#pragma omp critical(inner)
      inner_total += t + 1;
    }
    note(t);
  }
#pragma omp parallel sections
  {
#pragma omp section
    {
#pragma omp critical
      total += 3;
    }
#pragma omp section
    {
#pragma omp critical
      total += 5;
    }
  }
  long sum = 0;
  for (int i = 0; i < 64; i++) sum += log_[i];
  printf("total %ld inner %ld calls %ld log sum %ld by pointer %ld\n", total, inner_total, calls, sum, by_pointer);
  return 0;
}
