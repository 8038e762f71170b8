/* expect: 4:40: error: expected ',' in the list of clause 'reduction', found '[' (array sections and members are not supported) */
int main(void) {
  int s[4] = {0};
#pragma omp parallel for reduction(+: s[0:4])
  for (int i = 0; i < 10; i++) s[i % 4] += i;
  return s[0];
}
