/* A determinism violation the memory digest cannot see: the loop's bound is a local (the
 * stack is not digested) computed from the process id, so each node counts other
 * iterations. The nodes deal themselves their shares of a `parallel for` (issue 14: no
 * `before`), so the trip count joins the check: cape must name the region and exit
 * non-zero, never print a sum made of shares of different loops and exit 0. */
#include <stdio.h>
#include <unistd.h>

#define N 1000
static int b[N];

int main(void) {
  volatile int seed = (int)(getpid() & 255);
  int n = 600 + seed;
#pragma omp parallel for /* contract: region begins */
  for (int i = 0; i < n; i++) {
    b[i] = 2 * i + 1;
  } /* contract: region ends */
  long sum = 0;
  for (int i = 0; i < N; i++) sum += b[i];
  printf("n %d sum %ld\n", n, sum);
  return 0;
}
