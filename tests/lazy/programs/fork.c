/* --sync=lazy and the processes a program starts (tests/lazy). After a region, the pages
 * other nodes wrote are invalid on a node (userfaultfd missing mode) until the program
 * touches them. A child made by fork() (clone without CLONE_VM) does not inherit that
 * registration: it would read those pages as zeros. Here the sequential part after each
 * region starts processes before it touches the array itself: fork() children sum the
 * array and hand the sum back (a pipe, their exit status), a clone(CLONE_VM) child sums it
 * in the program's own memory, a raw clone3() child answers with its exit status, and
 * system() and posix_spawn() run commands (sharing the memory until exec). Each
 * result feeds the next region, so a wrong sum on any node changes the master's output. */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define N (192 * 1024) /* 1.5 MiB of doubles: 384 pages */
static double a[N];
static volatile double clone_sum;

static double sum(void) {
  double s = 0;
  for (int i = 0; i < N; i++) s += a[i] * (1 + i % 3);
  return s;
}

/* fork(): the child sums and writes the sum into a pipe (and prints it: the master's child
 * prints once), the parent reads it back. */
static double sum_in_fork(void) {
  int p[2];
  if (pipe(p) != 0) exit(2);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) exit(2);
  if (pid == 0) {
    double s = sum();
    printf("child %.3f\n", s);
    fflush(stdout);
    if (write(p[1], &s, sizeof s) != (ssize_t)sizeof s) _exit(3);
    _exit(0);
  }
  double s = -1;
  if (read(p[0], &s, sizeof s) != (ssize_t)sizeof s) exit(2);
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) exit(2);
  close(p[0]);
  close(p[1]);
  return s;
}

/* fork() whose child answers with its exit status only. */
static int status_of_fork(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) exit(2);
  if (pid == 0) _exit((int)((long long)sum() % 251));
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) exit(2);
  return WEXITSTATUS(st);
}

/* clone3() without CLONE_VM (its flags are in memory, not in a register). */
static int status_of_clone3(void) {
  struct clone_args ca;
  memset(&ca, 0, sizeof ca);
  ca.exit_signal = SIGCHLD;
  fflush(stdout);
  long pid = syscall(SYS_clone3, &ca, sizeof ca);
  if (pid < 0) exit(2);
  if (pid == 0) _exit((int)((long long)(sum() * 3) % 241));
  int st;
  if (waitpid((pid_t)pid, &st, 0) != pid || !WIFEXITED(st)) exit(2);
  return WEXITSTATUS(st);
}

static int clone_child(void *arg) {
  (void)arg;
  clone_sum = sum();
  return 0;
}

/* A process sharing the program's memory (clone(CLONE_VM), as vfork and posix_spawn make). */
static double sum_in_clone_vm(void) {
  size_t size = 256 * 1024;
  char *stack = malloc(size);
  if (!stack) exit(2);
  fflush(stdout);
  pid_t pid = clone(clone_child, stack + size, CLONE_VM | SIGCHLD, NULL);
  if (pid < 0) exit(2);
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) exit(2);
  memset(stack, 0, size); /* what the child left there differs from node to node */
  free(stack);
  return clone_sum;
}

int main(void) {
  double total = 0;
#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = i * 0.25 + 1;
  double s1 = sum_in_fork();
  total += s1;

#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = a[i] * 0.5 + s1 * 1e-12 + (i % 5);
  int code = status_of_fork();
  double s2 = sum_in_clone_vm();
  total += code + s2;

#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] += code + (i % 7) * 0.125;
  /* Commands: the shell's exit status, a line read from popen(), a posix_spawn()ed program. */
  fflush(stdout);
  int sys = system("exit 7");
  if (!WIFEXITED(sys)) return 2;
  /* (popen(): not here. Its FILE, freed by pclose(), keeps the child's pid in the heap,
   * which differs from node to node: the determinism check stops the job, lazy or not.) */
  int got = status_of_clone3();
  char *argv[] = {"sh", "-c", "exit 5", NULL};
  pid_t sp;
  int st;
  if (posix_spawn(&sp, "/bin/sh", NULL, NULL, argv, environ) != 0 || waitpid(sp, &st, 0) != sp || !WIFEXITED(st))
    return 2;
  double s3 = sum_in_fork();
  total += s3 + WEXITSTATUS(sys) + got + WEXITSTATUS(st);

#pragma omp parallel for
  for (int i = 0; i < N; i++) a[i] = a[i] * 0.75 + total * 1e-12;
  printf("s1 %.3f code %d s2 %.3f s3 %.3f sys %d clone3 %d spawn %d final %.3f\n", s1, code, s2, s3, WEXITSTATUS(sys), got,
         WEXITSTATUS(st), sum());
  return 0;
}
