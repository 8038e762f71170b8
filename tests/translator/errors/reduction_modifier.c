/* expect: 4:36: error: reduction modifier 'inscan' is not supported */
int main(void) {
  int s = 0;
#pragma omp parallel for reduction(inscan, +: s)
  for (int i = 0; i < 10; i++) s += i;
  return s;
}
