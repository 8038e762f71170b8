/* A histogram reduced over an array section of a static local of main (the bins 2..11 of 16),
   next to a kernel function that scales a static local array of main in its own region. Under
   TICKPT the static locals register themselves, except one a clause names by a section, which
   the region registers around the section (tests/ordinary, session 15). */
#include <stdio.h>
static void scale(int n, long v[n], long f) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) v[i] *= f + i % 3;
}
int main(void) {
  static long h[16];
  static long w[3000];
  for (int i = 0; i < 3000; i++) w[i] = (i * 7919L) % 1000;
  scale(3000, w, 2);
#pragma omp parallel for reduction(+:h[2:10])
  for (int i = 0; i < 3000; i++) h[2 + w[i] % 10] += w[i] / 10;
  long s = 0;
  for (int i = 0; i < 16; i++) s += h[i] * (i + 1);
  printf("histogram checksum %ld h[2] %ld h[11] %ld\n", s, h[2], h[11]);
  return 0;
}
