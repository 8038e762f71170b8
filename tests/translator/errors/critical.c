/* expect: 6:13: error: 'omp critical' is not supported by CAPE: mutual exclusion needs shared memory */
int main(void) {
  int s = 0;
#pragma omp parallel
  {
#pragma omp critical
    s++;
  }
  return s;
}
