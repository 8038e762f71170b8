/* expect: 6:13: error: 'omp atomic' is not supported by CAPE: 'atomic compare' across nodes is not implemented yet */
int main(void) {
  int m = 0;
#pragma omp parallel for
  for (int i = 0; i < 10; i++)
#pragma omp atomic compare
    if (m < i) m = i;
  return m;
}
