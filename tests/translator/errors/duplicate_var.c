/* expect: 5:44: error: variable 'x' appears in both 'private' and 'shared' clauses */
int a[10];
int main(void) {
  int x = 0;
#pragma omp parallel for private(x) shared(x)
  for (int i = 0; i < 10; i++) a[i] = x;
  return 0;
}
