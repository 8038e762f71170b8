/* expect: 6:25: error: loops of 'omp parallel for' collapse(2): the bounds of loop 2 use 'i' of an outer loop (non-rectangular loops are not supported yet) */
int a[10][10];
int main(void) {
#pragma omp parallel for collapse(2)
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < i; j++) a[i][j] = i;
  return 0;
}
