/* expect: 4:26: error: clause 'reduction' needs 'operator: list' */
int main(void) {
  int s = 0;
#pragma omp parallel for reduction(s)
  for (int i = 0; i < 10; i++) s += i;
  return s;
}
