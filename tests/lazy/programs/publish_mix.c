/* --sync=lazy, the publishing copy made by the program (tests/lazy; docs/monitor.md,
 * "Session 12"). A node publishes the pages it kept after each region; a publication of
 * CAPE_LAZY_PROGRAM_COPY pages or more is copied by the program into the publishing arena,
 * a smaller one read by the monitor into heap copies. Each page keeps its last two versions,
 * the slot of version v reused for v + 2, so a page's copies move between the heap and the
 * arena as publications alternate in size. Each round:
 *   - a region writes the first SPAN pages of `a` (SPAN cycles through sizes below and
 *     above the threshold the tests set, so the same pages are published both ways);
 *   - the sequential part reads them in an order that jumps between the nodes' blocks (one
 *     fetch per page, each at the version the region left);
 *   - the next region rewrites them from that sum: an owner that gets there first rewrites
 *     pages the others have not fetched yet, which must still get the older version;
 *   - every node then writes every page (schedule(static, 1)): the master merges each page
 *     against its version before that region (the base the page service keeps).
 * Fresh arrays per round for the reads (a page read once travels eagerly from then on).
 * After round 1 a forked child looks at the arena's address (protocol.h,
 * CAPE_PUBLISH_ARENA_ADDRESS): natively nothing is mapped there, and under cape the child
 * must not get the arena either (MADV_DONTFORK), or it could write into published pages.
 * Each result is printed; gcc -fopenmp's output must be matched. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE_DOUBLES 512
#define PAGES 240
#define N (PAGES * PAGE_DOUBLES)
#define ROUNDS 8
#define STRIDE 7 /* pages; prime to every span below */

static const int spans[4] = {12, 240, 36, 180};

static double sum_jumping(const double *v, int pages) {
  double s = 0;
  for (int k = 0; k < pages; k++) {
    const double *p = v + (long)((k * STRIDE) % pages) * PAGE_DOUBLES;
    for (int j = 0; j < PAGE_DOUBLES; j++) s += p[j] * (double)(j % 5 + 1);
  }
  return s;
}

static double checksum(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (double)(i % 13 + 1);
  return s;
}

int main(void) {
  double *all = NULL;
  if (posix_memalign((void **)&all, 4096, sizeof(double) * (size_t)N * ROUNDS)) return 1;
  for (long i = 0; i < (long)N * ROUNDS; i++) all[i] = 0;
  double carry = 1.0;
  for (int round = 0; round < ROUNDS; round++) {
    double *a = all + (long)round * N;
    int n = spans[round % 4] * PAGE_DOUBLES;
#pragma omp parallel for
    for (int i = 0; i < n; i++) a[i] = 0.25 * i + round + carry;
    double s = sum_jumping(a, spans[round % 4]);
#pragma omp parallel for
    for (int i = 0; i < n; i++) a[i] = 0.5 * a[i] + s / (8.0 * n);
    double t = checksum(a, n);
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < n; i++) a[i] = a[i] * 0.75 + (i % 3) + t / (64.0 * n);
    carry = checksum(a, n) / (64.0 * n);
    printf("round %d (%d pages): %.6f %.6f %.6f\n", round, spans[round % 4], s, t, carry);
    if (round == 1) {
      fflush(stdout);
      pid_t child = fork();
      if (child == 0) _exit(msync((void *)0x102000000000UL, 4096, MS_ASYNC) == 0 ? 3 : 4);
      int status = 0;
      if (child < 0 || waitpid(child, &status, 0) != child) return 1;
      printf("a forked child %s the arena's address\n",
             WIFEXITED(status) && WEXITSTATUS(status) == 4 ? "finds nothing at" : "has something at");
    }
  }
  /* Every array once more, read by every node: pages kept long ago, at their last version. */
  printf("all: %.6f\n", checksum(all, N * ROUNDS));
  free(all);
  return 0;
}
