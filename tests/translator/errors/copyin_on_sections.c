/* expect: 7:22: error: clause 'copyin' is not valid on 'omp sections' */
static int t;
#pragma omp threadprivate(t)
int main(void) {
#pragma omp parallel
  {
#pragma omp sections copyin(t)
    {
      t = 1;
    }
  }
  return 0;
}
