/* expect: 4:13: error: 'omp target teams distribute parallel for' is not supported by CAPE: CAPE has no devices */
int a[10];
int main(void) {
#pragma omp target teams distribute parallel for map(tofrom: a)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
