/* expect: 5:3: error: '{' is never closed: the file ends before its '}' */
int a[10];
int main(void) {
#pragma omp parallel
  {
