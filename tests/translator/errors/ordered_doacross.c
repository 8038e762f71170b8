/* expect: 4:26: error: clause 'ordered(n)' (a doacross loop) is not supported by CAPE */
int a[10];
int main(void) {
#pragma omp parallel for ordered(1)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
