/* expect: 3:13: error: 'omp taskwait' is not supported by CAPE */
int main(void) {
#pragma omp taskwait
  return 0;
}
