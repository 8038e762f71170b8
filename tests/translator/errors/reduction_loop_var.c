/* expect: 5:39: error: the loop variable 'i' may not appear in clause 'reduction' */
int main(void) {
  int s = 0;
  int i;
#pragma omp parallel for reduction(+: i)
  for (i = 0; i < 10; i++) s += i;
  return s;
}
