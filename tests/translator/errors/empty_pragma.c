/* expect: 3:1: error: expected an OpenMP directive name after '#pragma omp' */
int main(void) {
#pragma omp
  return 0;
}
