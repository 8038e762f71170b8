/* The program cape_bench_monitor runs under `cape monitor` (and natively for baselines).
 *   victim touch NPAGES native|cape [seq|scatter|half]
 *                                     one write per page of a populated buffer in a window,
 *                                     in address order or scattered (page i * 7919 mod N:
 *                                     never two neighbours in a row; half: every other page
 *                                     of a buffer twice as big); then a second window
 *                                     (start() again: warm buffers in the monitor)
 *   victim between NPAGES W           a populated buffer; a first window; then 5 rounds of:
 *                                     one write to each of W pages spread over it (outside
 *                                     any window), start(), stop(): prints each start()
 *   victim matmul N native|cape       C = A x B (doubles) in a window: the compute phase
 *   victim calls N                    N runtime calls (cape_node_id): trap round trips
 * Prints the phases in nanoseconds, measured inside the program. */
#include <cape/cape.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  long n = atol(argv[2]);
  int cape = argc > 3 && strcmp(argv[3], "cape") == 0;
  if (strcmp(argv[1], "touch") == 0) {
    int scatter = argc > 4 && strcmp(argv[4], "scatter") == 0;
    int half = argc > 4 && strcmp(argv[4], "half") == 0;
    long span = half ? 2 * n : n;
    char* buf = mmap(NULL, span * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(buf, 1, span * 4096); /* populated, like program data */
    long long t0 = now_ns();
    if (cape) cape_start();
    long long t1 = now_ns();
    for (long i = 0; i < n; i++) {
      long p = scatter ? (i * 7919) % n : half ? 2 * i : i;
      ((volatile long*)(buf + p * 4096))[3] = i + 7;
    }
    long long t2 = now_ns();
    if (cape) cape_create("touched");
    long long t3 = now_ns();
    if (cape) cape_stop();
    long long t4 = now_ns();
    if (cape) cape_start();
    long long t5 = now_ns();
    if (cape) cape_stop();
    printf("%lld %lld %lld %lld %lld\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  } else if (strcmp(argv[1], "between") == 0) {
    long w = argc > 3 ? atol(argv[3]) : 0;
    char* buf = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(buf, 1, n * 4096);
    cape_start();
    cape_stop();
    for (int r = 0; r < 5; r++) {
      for (long i = 0; i < w; i++) ((volatile long*)(buf + (i * n / w) * 4096))[r] = i + r;
      long long t0 = now_ns();
      cape_start();
      long long t1 = now_ns();
      cape_stop();
      printf("%lld ", t1 - t0);
    }
    printf("\n");
  } else if (strcmp(argv[1], "matmul") == 0) {
    double* a = malloc(sizeof(double) * n * n);
    double* b = malloc(sizeof(double) * n * n);
    double* c = calloc(n * n, sizeof(double));
    for (long i = 0; i < n * n; i++) a[i] = (double)(i % 13), b[i] = (double)(i % 7);
    if (cape) cape_start();
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
      for (long k = 0; k < n; k++) {
        double aik = a[i * n + k];
        for (long j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
      }
    long long t1 = now_ns();
    if (cape) cape_create("c");
    long long t2 = now_ns();
    if (cape) cape_stop();
    printf("%lld %lld %g\n", t1 - t0, t2 - t1, c[n * n / 2]);
  } else if (strcmp(argv[1], "calls") == 0) {
    long long t0 = now_ns();
    long s = 0;
    for (long i = 0; i < n; i++) s += cape_node_id();
    long long t1 = now_ns();
    printf("%lld %ld\n", t1 - t0, s);
  }
  return 0;
}
