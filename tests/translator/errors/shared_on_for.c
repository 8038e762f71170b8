/* expect: 5:17: error: clause 'shared' is not valid on 'omp for' */
int a[10];
int main(void) {
#pragma omp parallel
#pragma omp for shared(a)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
