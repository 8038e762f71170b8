/* Issue 10 case 4 inside a region: after a region has run, `single` prints and calls exit(3).
 * gcc -fopenmp's program prints every line and exits with 3. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  (void)argv;
  printf("start\n");
  int a[100];
#pragma omp parallel for
  for (int i = 0; i < 100; i++) a[i] = i * 2;
  printf("after the first region %d\n", a[99] + a[1]);
#pragma omp parallel
  {
#pragma omp single
    {
      printf("leaving from single\n");
      fprintf(stderr, "leaving from single, on stderr\n");
      if (argc < 100) exit(3);
    }
  }
  printf("not reached\n");
  return 0;
}
