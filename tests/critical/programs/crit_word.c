/* 8-byte words shared by an int added to under a critical section and an int one thread
 * writes outside it, after the section: a capture cut at the critical body's bytes must not
 * carry the neighbour, nor the region's last capture take the lock's bytes as its own
 * (docs/critical.md, "Bytes next to a lock's bytes"). */
#include <omp.h>
#include <stdio.h>
int words[256]; /* words[2k]: added to under critical; words[2k+1]: thread k % T's own */
int main(void) {
#pragma omp parallel
  {
    int t = omp_get_thread_num(), T = omp_get_num_threads();
    for (int k = 0; k < 64; k++) {
#pragma omp critical
      words[2 * k] += t + 1;
      if (k % T == t) words[2 * k + 1] = 100 * t + k;
    }
  }
  long s = 0, o = 0;
  for (int k = 0; k < 64; k++) s += words[2 * k], o += words[2 * k + 1];
  printf("locked %ld own %ld\n", s, o);
  return 0;
}
