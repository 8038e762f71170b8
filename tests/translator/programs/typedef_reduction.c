/* Reductions over typedef'd and macro-named types (the type comes from the preprocessed
 * unit, not from a declaration the translator must recognise). */
#include <stdio.h>
#include <stdint.h>
typedef double real;
typedef long long big;
typedef real real2;
#define COUNTER unsigned
#define DECL(t, v, init) t v = init
int main(void) {
  real x = 0.5;
  real2 y = 1;
  big n = 7;
  COUNTER c = 0;
  DECL(int64_t, m, -3);
  uint8_t bits = 0;
  size_t z = 1;
  int i;
#pragma omp parallel for reduction(+: x, n) reduction(*: y) reduction(max: m) reduction(|: bits) reduction(+: c, z)
  for (i = 1; i <= 40; i++) {
    x += i * 0.25;
    n += i;
    y *= (i % 5 == 0) ? 2.0 : 1.0;
    if (i * 3 > m) m = i * 3;
    bits |= (uint8_t)(1u << (i % 8));
    c += 2;
    z += (size_t)i;
  }
  printf("%.2f %.1f %lld %u %lld %u %zu\n", x, y, n, c, (long long)m, bits, z);
  return 0;
}
