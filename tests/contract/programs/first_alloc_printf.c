/* Issue 10 case 2 as reported: the program's first heap allocation is stdout's buffer,
 * made by a printf inside `single` (stdout is a file or a pipe, so it is fully buffered and
 * allocated on first use). Later regions and the output after them must be right. */
#include <stdio.h>

int main(void) {
  int a[300];
#pragma omp parallel
  {
#pragma omp single
    printf("first output, from single\n");
#pragma omp for
    for (int i = 0; i < 300; i++) a[i] = i % 17;
  }
  long s = 0;
  for (int i = 0; i < 300; i++) s += a[i];
  printf("sum %ld\n", s);
#pragma omp parallel for
  for (int i = 0; i < 300; i++) a[i] = (int)(s % (i + 1));
  s = 0;
  for (int i = 0; i < 300; i++) s += a[i];
  printf("second sum %ld\n", s);
  return 0;
}
