/* expect: 7:13: error: 'omp barrier' may not be closely nested in a worksharing construct */
int a[10];
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 10; i++) {
    a[i] = i;
#pragma omp barrier
  }
  return 0;
}
