/* --sync=lazy and the kernel (tests/lazy): after a region, the pages other nodes wrote are
 * invalid on a slave until touched. Here the sequential part hands those pages to the kernel
 * first: read(2) into them (whole pages and a piece of one), write(2) from them, and a
 * region then computes from what the kernel put there, so a slave that got EFAULT or a
 * short read, or kept the old bytes, makes the master's output differ from gcc -fopenmp's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N (64 * 1024) /* 512 KiB of doubles: 128 pages */
static double a[N], b[N];

static void must_read(int fd, void *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)p + got, n - got);
    if (r <= 0) {
      perror("read");
      exit(3);
    }
    got += (size_t)r;
  }
}

int main(void) {
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = i * 0.5;

  /* The kernel writes into a: the whole second half, and 100 bytes in the middle of a page
   * of the first half (the rest of that page must keep the region's values). */
  int p[2];
  if (pipe(p) != 0) return 2;
  static double src[N / 2];
  for (int i = 0; i < N / 2; i++) src[i] = 1000.0 + i;
  for (size_t off = 0; off < sizeof src;) { /* the pipe holds 64 KiB: write and read in turns */
    size_t k = sizeof src - off < 32768 ? sizeof src - off : 32768;
    if (write(p[1], (char *)src + off, k) != (ssize_t)k) return 2;
    must_read(p[0], (char *)&a[N / 2] + off, k);
    off += k;
  }
  char bytes[100];
  memset(bytes, 0x41, sizeof bytes);
  if (write(p[1], bytes, sizeof bytes) != (ssize_t)sizeof bytes) return 2;
  must_read(p[0], (char *)&a[1000] + 4, sizeof bytes);

  /* The kernel reads from a (write(2) out of pages that may be invalid), into b. */
  for (size_t off = 0; off < sizeof a;) {
    size_t k = sizeof a - off < 32768 ? sizeof a - off : 32768;
    if (write(p[1], (char *)a + off, k) != (ssize_t)k) return 2;
    must_read(p[0], (char *)b + off, k);
    off += k;
  }

  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < N; i++) s += a[i] * 3 + b[i] + (i % 7);
  printf("sum %.6f a[1000] %.6f a[1001] %.6f a[N-1] %.1f b[N/2] %.1f\n", s, a[1000], a[1001], a[N - 1], b[N / 2]);
  return 0;
}
