/* expect: 6:17: error: clause 'copyprivate' is not valid on 'omp for' */
int a[10];
int main(void) {
  int x = 0;
#pragma omp parallel private(x)
#pragma omp for copyprivate(x)
  for (int i = 0; i < 10; i++) a[i] = x;
  return 0;
}
