/* expect: 9:13: error: 'omp parallel for' is not supported by CAPE: nested parallelism */
int a[10][10];
int main(void) {
#pragma omp parallel
  {
#pragma omp for
    for (int i = 0; i < 10; i++)
    {
#pragma omp parallel for
      for (int j = 0; j < 10; j++) a[i][j] = i + j;
    }
  }
  return 0;
}
