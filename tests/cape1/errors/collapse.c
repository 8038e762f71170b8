/* expect: 7:13: error: 'collapse' is not supported by --model=cape1 yet */
#include <stdio.h>

int a[4][4];

int main(void) {
#pragma omp parallel for collapse(2)
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) a[i][j] = i + j;
  printf("%d\n", a[3][3]);
  return 0;
}
