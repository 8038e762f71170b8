/* expect: 6:13: error: 'omp cancel' is not supported by CAPE */
int a[10];
int main(void) {
#pragma omp parallel
  {
#pragma omp cancel parallel
  }
  return 0;
}
