/* expect: 6:41: error: array section 'p[0:n]' in clause 'reduction': 'p' must be an array declared in this file */
int main(void) {
  double a[10], *p = a;
  int i, n = 10;
  (void)a;
#pragma omp parallel for reduction(max: p[0:n])
  for (i = 0; i < n; i++) p[i] = i;
  return 0;
}
