/* expect: 4:26: error: clause 'default(private)': expected 'shared' or 'none' */
int a[10];
int main(void) {
#pragma omp parallel for default(private) shared(a)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
