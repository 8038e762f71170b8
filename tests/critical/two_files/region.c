/* The region: it calls add_to() of another file with a pointer to its local (docs/critical.md:
 * the one case a critical section's writes are not carried, which cape says). */
#include <stdio.h>
void add_to(long *sum, long v);
int main(void) {
  long s = 0;
#pragma omp parallel
  add_to(&s, 1);
  printf("s %ld\n", s);
  return 0;
}
