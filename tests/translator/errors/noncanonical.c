/* expect: 5:26: error: loop of 'omp parallel for' is not in canonical form: the test must be a single comparison */
int a[10];
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 10 && a[i]; i++) a[i] = i;
  return 0;
}
