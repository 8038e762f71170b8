/* expect: 5:22: error: clause 'lastprivate' is not valid on 'omp parallel' */
int a[10];
int main(void) {
  int x = 3;
#pragma omp parallel lastprivate(x)
  a[0] = x;
  return 0;
}
