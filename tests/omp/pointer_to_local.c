/* Locals of main the regions never name, written through pointers: an array behind another
 * name (`long *p = arr;` then `p[i] = ...`) and a struct behind a pointer. OpenMP shares them;
 * under TICKPT, which ships only registered variables, they were left out before session 9
 * (the master summed an uninitialised array, silently). */
#include <stdio.h>

struct stats {
  long sum[4];
};

int main(void) {
  long arr[600];
  long *p = arr;
  struct stats st = {{0, 0, 0, 0}};
  struct stats *ps = &st;
#pragma omp parallel for
  for (int i = 0; i < 600; i++) p[i] = (long)i * i % 1013;
#pragma omp parallel for
  for (int k = 0; k < 4; k++)
    for (int i = k; i < 600; i += 4) ps->sum[k] += arr[i];
  long s = 0;
  for (int i = 0; i < 600; i++) s += arr[i] * (i % 7);
  printf("s %ld sums %ld %ld %ld %ld\n", s, st.sum[0], st.sum[1], st.sum[2], st.sum[3]);
  return 0;
}
