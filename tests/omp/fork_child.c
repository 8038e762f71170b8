/* Children made by fork() that run parallel regions of their own (issue 14, session 12).
 * Under cape each node's program forks its own child, which no monitor traces (ptrace
 * follows the program's threads, not the processes it makes): libcape runs it as a program
 * alone on one node (runtime/src/cape.c, forked_child). Before that, the child inherited its
 * parent's TLS (the node count, "the main thread", so its clause calls were deferred onto its
 * start()'s trap) and was killed by that trap (SIGTRAP) with nobody to serve it.
 *
 * The parent runs regions before and between the forks, so the child forks from a node that
 * has deferred calls and knows its rank. Each child sums with a reduction, writes an array in
 * a parallel for and reads a popen()ed command's output, and hands its answer back through a
 * pipe; the answers feed the parent's next region. The children's regions use num_threads(1):
 * libgomp is not fork-safe (a gcc -fopenmp child whose parent has a thread pool hangs in its
 * first team of more than one thread), and a child's team is one node under cape anyway.
 * Integer arithmetic only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 6000
static long a[N];
static long b[N];

static long from_command(const char *cmd) {
  FILE *f = popen(cmd, "r");
  if (!f) exit(2);
  long v = -1;
  if (fscanf(f, "%ld", &v) != 1) v = -1;
  pclose(f);
  return v;
}

/* What a child computes: a reduction, a max reduction, an array written by a parallel for
 * (its own copy of b: the parent's is not touched), a helper's output. */
static long child_work(long seed) {
  long s = 0, m = 0;
#pragma omp parallel for num_threads(1) reduction(+ : s)
  for (int i = 0; i < N; i++) s += (a[i] * seed) % 1009;
#pragma omp parallel for num_threads(1) reduction(max : m)
  for (int i = 0; i < N; i++) {
    long v = (a[i] ^ seed) % 7919;
    if (v > m) m = v;
  }
#pragma omp parallel for num_threads(1) firstprivate(seed)
  for (int i = 0; i < N; i++) b[i] = a[i] + seed * i;
  long t = 0;
  for (int i = 0; i < N; i++) t += b[i] % 101;
  long h = from_command("expr 40 + 2");
  return s * 1000003 + m * 31 + t + h;
}

static long in_child(long seed) {
  int p[2];
  if (pipe(p) != 0) exit(2);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) exit(2);
  if (pid == 0) {
    close(p[0]);
    long r = child_work(seed);
    if (write(p[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(3);
    _exit(0);
  }
  close(p[1]);
  long r = -1;
  if (read(p[0], &r, sizeof r) != (ssize_t)sizeof r) r = -1;
  close(p[0]);
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) exit(2);
  if (WIFSIGNALED(st)) printf("child %ld: killed by signal %d\n", seed, WTERMSIG(st));
  else if (WEXITSTATUS(st) != 0) printf("child %ld: exit status %d\n", seed, WEXITSTATUS(st));
  return r;
}

int main(void) {
  long total = 0;
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = (long)i * 7 + 3;
  for (int k = 1; k <= 3; k++) {
    long r = in_child(k);
    printf("child %d answered %ld\n", k, r);
    long s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < N; i++) {
      a[i] = (a[i] + r % 97 + i) % 100003;
      s += a[i];
    }
    total += s;
  }
  printf("total %ld a[17] %ld b[5] %ld\n", total, a[17], b[5]);
  return 0;
}
