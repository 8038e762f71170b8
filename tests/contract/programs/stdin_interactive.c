/* stdin streamed, not buffered whole: the test's driver writes one number, waits for this
 * program's answer, then writes the next (a conversation, as with a user at a terminal).
 * A `cape run` that read its whole input before starting would never answer. Each answer
 * is computed by a region on every node. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  char line[64];
  int asked = 0;
  while (fgets(line, sizeof line, stdin)) {
    long n = atol(line), s = 0;
#pragma omp parallel for reduction(+ : s)
    for (long i = 1; i <= n; i++) s += i * i % 1000;
    printf("%ld -> %ld\n", n, s);
    fflush(stdout);
    asked++;
  }
  printf("bye after %d questions\n", asked);
  return 0;
}
