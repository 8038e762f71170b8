/* expect: 6:20: error: clause 'reduction' is not valid on 'omp single' */
int main(void) {
  int s = 0;
#pragma omp parallel
  {
#pragma omp single reduction(+: s)
    s = 1;
  }
  return s;
}
