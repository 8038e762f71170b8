#include <stdio.h>
int main(void) {
  int add = 0, mul = 1, and_ = -1, or_ = 0, xor_ = 0, land = 1, lor = 0;
  long sub = 0;
  float mn = 1e9f;
  double mx = -1e9;
  unsigned char uc = 0;
#pragma omp parallel for reduction(+: add) reduction(*: mul) reduction(-: sub) reduction(&: and_) reduction(|: or_) reduction(^: xor_) reduction(&&: land) reduction(||: lor) reduction(min: mn) reduction(max: mx, uc)
  for (int i = 1; i < 20; i++) {
    add += i; mul *= (i % 5 == 0) ? 2 : 1; sub -= i; and_ &= ~(1 << i); or_ |= 1 << i;
    xor_ ^= i; land = land && i; lor = lor || i == 7; if (i < mn) mn = i; if (i > mx) mx = i;
    if (i > uc) uc = (unsigned char)i;
  }
  printf("%d %d %ld %d %d %d %d %d %g %g %d\n", add, mul, sub, and_, or_, xor_, land, lor, mn, mx, uc);
  return 0;
}
