/* Included through -I; N comes from the command line (-DN=...). */
#ifndef N
#error "compile with -DN=..."
#endif
static inline void scale(double *v, int n, double f) {
  int i;
#pragma omp parallel for
  for (i = 0; i < n; i++) v[i] *= f;
}
