/* expect: 4:26: error: clause 'frobnicate' is not valid on 'omp parallel for' */
int a[10];
int main(void) {
#pragma omp parallel for frobnicate
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
