/* expect: 6:1: error: syntax error, unexpected end of file */
int a[10];
int main(void) {
#pragma omp parallel
  {
