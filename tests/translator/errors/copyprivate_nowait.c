/* expect: 6:35: error: clauses 'copyprivate' and 'nowait' may not be used together */
int main(void) {
  int x = 0;
#pragma omp parallel private(x)
  {
#pragma omp single copyprivate(x) nowait
    x = 5;
  }
  return 0;
}
