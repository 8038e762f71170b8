/* Lines printed in pieces: a line built by several printf calls inside `single`, a line the
 * sequential part begins and the master finishes inside a region (and the reverse), a stderr
 * line in pieces, and output that ends without a newline. Only one thread prints while a
 * line is open, so gcc -fopenmp's output is deterministic; the test compares sorted lines and
 * whether the output ends with a newline. */
#include <stdio.h>

int main(void) {
  printf("the sequential part begins a line, ");
#pragma omp parallel
  {
#pragma omp master
    printf("the master ends it\n");
  }
#pragma omp parallel
  {
#pragma omp single
    {
      printf("single: ");
      printf("one ");
      printf("two ");
      printf("three\n");
      fprintf(stderr, "stderr in ");
      fprintf(stderr, "pieces\n");
    }
  }
#pragma omp parallel
  {
#pragma omp master
    printf("the master begins a line, ");
  }
  printf("the sequential part ends it\n");
  int a[40];
#pragma omp parallel for
  for (int i = 0; i < 40; i++) a[i] = 3 * i;
  printf("sum %d; the last line has no newline", a[39] + a[1]);
  return 0;
}
