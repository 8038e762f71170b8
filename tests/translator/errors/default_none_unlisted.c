/* expect: 7:31: error: 'scale' is not listed in a data-sharing clause of 'omp parallel for', which has default(none) */
double a[10];
int main(void) {
  double scale = 2;
#pragma omp parallel for default(none) shared(a)
  for (int i = 0; i < 10; i++)
    a[i] = a[i] + (double)i * scale;
  return 0;
}
