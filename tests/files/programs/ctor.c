/* A file written by a constructor, before main. */
#include <stdio.h>
static int a[100];
__attribute__((constructor)) static void early(void) {
  FILE *f = fopen("early.txt", "a");
  if (f) { fprintf(f, "constructor\n"); fclose(f); }
}
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 100; i++) a[i] = i;
  printf("ctor %d\n", a[99]);
  return 0;
}
