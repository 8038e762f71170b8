/* expect: 9:13: error: 'omp for' inside a statement of a 'parallel num_threads' region is not supported yet */
int a[10];
int main(void) {
  int i, it;
#pragma omp parallel num_threads(2)
  {
    for (it = 0; it < 3; it++) {
      a[0] += it;
#pragma omp for
      for (i = 0; i < 10; i++) a[i] += i;
    }
  }
  return 0;
}
