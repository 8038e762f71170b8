/* A mapping every node wrote in one region is written again in `single` and then grown with
 * mremap (MREMAP_MAYMOVE) in the same window; the loop after writes all of it. uffd gives
 * gcc -fopenmp's output; the mprotect tracker must refuse loudly (its write protection splits
 * the mapping where the window wrote, and the kernel moves one mapping only: the program's
 * mremap would fail with EFAULT; tests/lazy/remap_refused.sh). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define PAGE 4096
static long *h;
int main(void) {
  h = (long *)syscall(SYS_mmap, 0, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#pragma omp parallel for
  for (long i = 0; i < 64 * PAGE / 8; i++) h[i] = i;
#pragma omp parallel
  {
#pragma omp single
    {
      h[100] = 5;  /* written in this window, then moved */
      long r = syscall(SYS_mremap, h, 64 * PAGE, 128 * PAGE, MREMAP_MAYMOVE, 0);
      if (r == -1) { perror("mremap"); exit(3); }
      h = (long *)r;
    }
#pragma omp for
    for (long i = 0; i < 128 * PAGE / 8; i += 3) h[i] += 1;
  }
  unsigned long s = 0;
  for (long i = 0; i < 128 * PAGE / 8; i++) s = s * 31 + h[i];
  printf("%lu\n", s);
  return 0;
}
