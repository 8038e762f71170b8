/* expect: 5:43: error: clause 'schedule' may appear once on 'omp parallel for', given 3 times (first at column 26) */
int a[10];
int main(void) {
  int i;
#pragma omp parallel for schedule(static) schedule(static, 2) schedule(static)
  for (i = 0; i < 10; i++) a[i] = i;
  return 0;
}
