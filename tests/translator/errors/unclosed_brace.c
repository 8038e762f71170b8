/* expect: 7:33: error: '{' is never closed: the file ends before its '}' */
int a[10];
int main(void) {
  int i;
#pragma omp parallel for
  for (i = 0; i < 10; i++) {
    if (a[i] > 0 && i % 2 == 0) {
      a[i] = i;
  }
  return 0;
}
