/* expect: 4:35: error: expected a variable name in clause 'firstprivate', found '3' */
int main(void) {
  int s = 0;
#pragma omp parallel firstprivate(3)
  s = 1;
  return s;
}
