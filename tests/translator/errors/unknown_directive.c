/* expect: 4:13: error: unknown OpenMP directive 'paralel' */
int a[10];
int main(void) {
#pragma omp paralel for
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
