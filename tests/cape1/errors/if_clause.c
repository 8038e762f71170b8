/* expect: 7:13: error: 'if' is not supported by --model=cape1 yet */
#include <stdio.h>

int a[16];

int main(int argc, char **argv) {
#pragma omp parallel for if(argc > 0)
  for (int i = 0; i < 16; i++) a[i] = i;
  printf("%d %s\n", a[15], argv[0] ? "" : "?");
  return 0;
}
