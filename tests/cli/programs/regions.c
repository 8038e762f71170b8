/* Where cape's messages say a program was (tests/cli/messages_test.cpp). MODE:
 *   exit   a node's program exits with 3 inside the region (line 21)
 *   crash  node 1's program dereferences NULL inside the region (line 22)
 *   return the master returns 5 after the last region
 *   print  prints 100000 lines after the region (for a reader that goes away)
 *   race   every node writes its own value into `flag` (a data race) in the region
 * The line numbers are asserted by the tests: keep them. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int a[1000];
int flag;

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int crash = strcmp(mode, "crash") == 0, quit = strcmp(mode, "exit") == 0, race = strcmp(mode, "race") == 0;
#pragma omp parallel for
  for (int i = 0; i < 1000; ++i) {
    if (quit && i == 600) exit(3);
    if (crash && i == 400 && omp_get_thread_num() == 1) *(volatile int *)(long)(a[0] * 0) = 1;
    a[i] = i;
    if (race) flag = omp_get_thread_num() + 1;
  }
  long s = 0;
  for (int i = 0; i < 1000; ++i) s += a[i];
  printf("sum=%ld\n", s);
  if (strcmp(mode, "print") == 0)
    for (int i = 0; i < 100000; ++i) printf("line %d\n", i);
  if (strcmp(mode, "return") == 0) return 5;
  return 0;
}
