/* expect: 5:38: error: 'i' in clause 'lastprivate' is declared by the loop */
int a[10];
int main(void) {
  int i = 0;
#pragma omp parallel for lastprivate(i)
  for (int i = 0; i < 10; i++) a[i] = i;
  return i;
}
