/* expect: 5:29: error: 'g' in clause 'copyin' is not threadprivate */
int g;
int a[10];
int main(void) {
#pragma omp parallel copyin(g)
  a[0] = g;
  return 0;
}
