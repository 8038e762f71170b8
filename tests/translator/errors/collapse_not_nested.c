/* expect: 8:5: error: loops of 'omp for' collapse(2): loop 2 must be the only statement of the loop around it */
int a[10][10], b[10];
int main(void) {
#pragma omp parallel
#pragma omp for collapse(2)
  for (int i = 0; i < 10; i++) {
    for (int j = 0; j < 10; j++) a[i][j] = i;
    b[i] = i;
  }
  return 0;
}
