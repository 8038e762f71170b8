/* atexit handlers that print, and exit(2) after the regions: the exit
 * status and the handlers' output must be gcc's. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int a[2000];
static long total;
static void bye1(void) { printf("bye1 total %ld\n", total); }
static void bye2(void) { printf("bye2 a[1999] %d\n", a[1999]); fflush(stdout); }
int main(void) {
  atexit(bye1);
  atexit(bye2);
#pragma omp parallel for
  for (int i = 0; i < 2000; i++) a[i] = i % 17;
#pragma omp parallel for reduction(+: total)
  for (int i = 0; i < 2000; i++) total += a[i];
  printf("total %ld\n", total);
  if (total != 0) exit(2);
  return 0;
}
