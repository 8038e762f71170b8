/* This file starts with a UTF-8 byte-order mark, which gcc skips. */
#include <stdio.h>
int main(void) {
  int i, s = 0;
#pragma omp parallel for reduction(+: s)
  for (i = 0; i < 100; i++) s += i * i;
  printf("%d\n", s);
  return 0;
}
