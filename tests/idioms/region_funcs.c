/* Orphaned constructs in called functions: a for and a single in a helper
 * called from a region, barrier in a helper, omp_get_thread_num in a helper,
 * a parallel for inside a function called in a sequential loop, recursion. */
#include <omp.h>
#include <stdio.h>
#define N 900
double a[N], b[N];
static int nth;
static void init(void) {
#pragma omp for
  for (int i = 0; i < N; i++) a[i] = i % 31;
}
static void smooth(double *dst, const double *src) {
#pragma omp for
  for (int i = 1; i < N - 1; i++) dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 4;
}
static void note(void) {
#pragma omp single
  nth = omp_get_num_threads();
#pragma omp barrier
}
static long fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
static double scale_all(double f) {
  double s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 0; i < N; i++) { a[i] *= f; s += a[i]; }
  return s;
}
int main(void) {
#pragma omp parallel
  {
    init();
    note();
    smooth(b, a);
    smooth(a, b);
  }
  double t = 0;
  for (int r = 1; r <= 3; r++) t += scale_all(1.0 + r / (double)fact(r + 1));
  printf("nth %d t %.6g a[100] %.6g b[100] %.6g\n", nth, t, a[100], b[100]);
  return 0;
}
