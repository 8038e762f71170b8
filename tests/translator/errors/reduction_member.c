/* expect: 5:40: error: expected ',' or an array section 's[lo:len]' in clause 'reduction', found '.' (members are not supported) */
struct { int x; } s;
int main(void) {
  int i;
#pragma omp parallel for reduction(+: s.x)
  for (i = 0; i < 10; i++) s.x += i;
  return 0;
}
