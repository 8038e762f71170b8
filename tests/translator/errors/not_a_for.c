/* expect: 5:3: error: 'omp parallel for' must be followed by a for loop */
int main(void) {
  int i = 0;
#pragma omp parallel for
  while (i < 10) i++;
  return 0;
}
