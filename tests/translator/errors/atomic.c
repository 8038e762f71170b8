/* expect: 6:13: error: 'omp atomic' is not supported by CAPE */
int main(void) {
  int s = 0;
#pragma omp parallel for
  for (int i = 0; i < 10; i++)
#pragma omp atomic
    s += i;
  return s;
}
