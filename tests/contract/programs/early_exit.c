/* Issue 10 case 4: the master's output must not be lost on an early exit. The program prints
 * (a whole line, stderr, and a line without newline) and calls exit(3) before any region. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  (void)argv;
  printf("start\n");
  fprintf(stderr, "leaving early\n");
  printf("an unterminated line");
  if (argc < 100) exit(3);
  int a[100];
#pragma omp parallel for
  for (int i = 0; i < 100; i++) a[i] = i;
  printf("not reached %d\n", a[99]);
  return 0;
}
