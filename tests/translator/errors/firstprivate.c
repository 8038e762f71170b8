/* expect: 5:22: error: clause 'firstprivate' is not supported yet, see issue 6 */
int a[10];
int main(void) {
  int x = 3;
#pragma omp parallel firstprivate(x)
  a[0] = x;
  return 0;
}
