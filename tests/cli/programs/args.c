/* Prints its arguments, one "argv[I]=..." line each, then sums a parallel loop: a tiny
 * OpenMP program for the tests of `cape run`'s command line (built with cape-cc, and with
 * gcc -fopenmp for the refusal of a program without libcape). */
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) printf("argv[%d]=%s\n", i, argv[i]);
  long sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 1; i <= 100; ++i) sum += i;
  printf("sum=%ld\n", sum);
  return 0;
}
