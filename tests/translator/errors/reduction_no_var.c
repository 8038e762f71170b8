/* expect: 4:37: error: expected a variable name in clause 'reduction' */
int main(void) {
  int s = 0;
#pragma omp parallel for reduction(+:)
  for (int i = 0; i < 10; i++) s += i;
  return s;
}
