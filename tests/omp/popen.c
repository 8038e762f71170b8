/* popen()/pclose() in the sequential part, before and between parallel regions, and the
 * values read used inside them. glibc's popen keeps the child's pid in the FILE it mallocs,
 * which differs between nodes: in the cape heap it made the determinism check fail
 * ("node N's memory differs from the master's ... the heap"). libcape's own popen keeps the
 * pid out of tracked memory (runtime/src/popen.c). Modes "r", "w" and "re", an exit status
 * through pclose, two streams open at once. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#define N 1000
static long a[N];

static long read_number(const char *cmd) {
  FILE *f = popen(cmd, "r");
  if (!f) { perror("popen"); exit(1); }
  long v = -1;
  if (fscanf(f, "%ld", &v) != 1) { fprintf(stderr, "no number from %s\n", cmd); exit(1); }
  int st = pclose(f);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) { fprintf(stderr, "pclose %d\n", st); exit(1); }
  return v;
}

int main(void) {
  long k = read_number("echo 42");
  for (int t = 0; t < 3; t++) {
#pragma omp parallel for
    for (int i = 0; i < N; i++) a[i] += k * i + t;
    /* between regions: two streams open at once, one with "e" (close-on-exec) */
    FILE *f = popen("echo 7; echo 8", "re");
    FILE *g = popen("expr 100 + 5", "r");
    if (!f || !g) { perror("popen"); return 1; }
    int cloexec = (fcntl(fileno(f), F_GETFD) & FD_CLOEXEC) != 0;
    int plain = (fcntl(fileno(g), F_GETFD) & FD_CLOEXEC) != 0;
    long x = 0, y = 0, z = 0;
    if (fscanf(f, "%ld %ld", &x, &y) != 2 || fscanf(g, "%ld", &z) != 1) return 1;
    pclose(g);
    pclose(f);
    k = x * y + z + t; /* 161 + t */
    printf("step %d: k %ld cloexec %d %d\n", t, k, cloexec, plain);
  }
  /* "w": the child reads what the program writes; its exit status comes back from pclose */
  FILE *w = popen("read a b; exit $((a + b))", "w");
  if (!w) { perror("popen"); return 1; }
  fprintf(w, "3 4\n");
  int st = pclose(w);
  printf("w status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  FILE *e = popen("exit 3", "r");
  st = pclose(e);
  printf("exit status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  long s = 0;
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < N; i++) s += a[i] % 1000 + k;
  printf("popen sum %ld a[999] %ld\n", s, a[N - 1]);
  return 0;
}
