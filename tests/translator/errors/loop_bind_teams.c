/* expect: 5:27: error: clause 'bind(teams)' is not supported by CAPE */
int a[10];
int main(void) {
  int i;
#pragma omp parallel loop bind(teams)
  for (i = 0; i < 10; i++) a[i] = i;
  return 0;
}
