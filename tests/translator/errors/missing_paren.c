/* expect: 5:33: error: missing ')' in clause 'private' */
int a[10];
int main(void) {
  int j;
#pragma omp parallel for private(j
  for (int i = 0; i < 10; i++) a[i] = j = i;
  return 0;
}
