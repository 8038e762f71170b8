/* lastprivate / firstprivate / private in worksharing for inside a region,
 * firstprivate array and struct, reductions of short and unsigned char and
 * long long and float, a downward unsigned loop. */
#include <omp.h>
#include <stdio.h>
typedef struct { int a; double b; } pair_t;
int out[1200];
int main(void) {
  int last = -1, k = 0;
  int base[4] = {1, 2, 3, 4};
  pair_t pr = {10, 0.5};
  short rs = 0; unsigned char ru = 0; long long rl = 1; float rf = 0;
  unsigned lastu = 0;
#pragma omp parallel firstprivate(base, pr)
  {
    base[0] += omp_get_thread_num();
#pragma omp for lastprivate(last) private(k)
    for (int i = 0; i < 1200; i++) { k = i * 2; last = k + base[i % 4] * 0 + pr.a; out[i] = k + base[1] + (int)(pr.b * 2); }
#pragma omp for reduction(+: rs, ru, rf) reduction(*: rl)
    for (int i = 0; i < 300; i++) { rs += (short)(i % 7); ru += (unsigned char)(i % 3); rf += 0.5f; if (i % 100 == 1) rl *= 3; }
  }
#pragma omp parallel for lastprivate(lastu)
  for (unsigned u = 1000; u > 10; u -= 3) { out[u] += 1; lastu = u; }
  long s = 0; for (int i = 0; i < 1200; i++) s += out[i];
  printf("last %d k %d s %ld rs %d ru %d rl %lld rf %.6g lastu %u base0 %d pr %d\n", last, k, s, rs, ru, rl, rf, lastu, base[0], pr.a);
  return 0;
}
