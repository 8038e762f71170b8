/* expect: 4:26: error: clause 'default(none)' is not supported yet, see issue 6 */
int a[10];
int main(void) {
#pragma omp parallel for default(none) shared(a)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
