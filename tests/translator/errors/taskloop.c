/* expect: 4:13: error: 'omp taskloop' is not supported by CAPE */
int a[10];
int main(void) {
#pragma omp taskloop grainsize(2)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
