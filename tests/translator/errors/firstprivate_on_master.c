/* expect: 6:20: error: clause 'firstprivate' is not valid on 'omp master' */
int main(void) {
  int x = 1;
#pragma omp parallel
  {
#pragma omp master firstprivate(x)
    x = 2;
  }
  return x;
}
