/* expect: 5:13: error: 'omp flush' is not supported by CAPE */
int flag;
int main(void) {
  flag = 1;
#pragma omp flush(flag)
  return 0;
}
