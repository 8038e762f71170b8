/* expect: 9:13: error: 'omp critical' is not supported by CAPE: mutual exclusion needs shared memory */
int s;
int main(void) {
  int i;
#pragma omp parallel
  {
#pragma omp for
    for (i = 0; i < 10; i++)
#pragma omp critical
      s += i;
  }
  return 0;
}
