/* A program for complete checkpoints (CAPE-1, tests/cape1/restart.sh): heap (brk and
 * mmap'd malloc chunks), an anonymous mapping with a PROT_NONE guard, a private file
 * mapping, a read-only descriptor read as it goes, a deep stack, FPU state and sleeps (so
 * a checkpoint taken from outside often lands inside a system call). It computes for about
 * a second at the bottom of the recursion and prints a digest of everything at the end, so
 * a run restarted from a checkpoint taken at any moment must print the same last lines.
 * Usage: restart_victim DATAFILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef VICTIM_TAG
#define VICTIM_TAG "victim"
#endif

enum { SMALL = 2000, BIG = 3 << 20, ANON = 1 << 20, DEPTH = 3000, STEPS = 600 };

static char *small[SMALL];
static unsigned char *big, *anon, *fmap;
static size_t fmap_len;
static int data_fd;
static uint64_t digest = 1469598103934665603ULL;
static double fsum;
static char global_buf[8192];

static void mix(uint64_t v) { digest = (digest ^ v) * 1099511628211ULL; }

/* A handler and a blocked signal: a restarted process must have both. */
static volatile sig_atomic_t usr1_seen;
static void on_usr1(int sig) { (void)sig; usr1_seen++; }

static void compute(void) {
  struct timespec ms = {0, 2000000};
  fprintf(stderr, "ready\n");
  for (int step = 0; step < STEPS; step++) {
    unsigned char chunk[16];
    ssize_t n = read(data_fd, chunk, sizeof chunk);
    if (n != (ssize_t)sizeof chunk) { printf("short read at step %d\n", step); exit(2); }
    for (int i = 0; i < 16; i++) mix(chunk[i]);
    for (int i = 0; i < 4096; i++) {
      size_t k = ((size_t)step * 4096 + (size_t)i) * 2654435761u;
      big[k % BIG] += (unsigned char)(step + i);
      anon[k % ANON] ^= (unsigned char)(i * 7 + step);
      small[k % SMALL][i % 64] += 1;
    }
    fsum += 1.0 / (step + 1.5);
    global_buf[step % sizeof global_buf] = (char)step;
    if (step % 50 == 0) printf("step %d digest %016llx\n", step, (unsigned long long)digest);
    nanosleep(&ms, NULL);
  }
}

/* Each frame holds data checked on the way back up. */
static uint64_t recurse(int depth) {
  volatile unsigned char frame[160];
  for (int i = 0; i < 160; i++) frame[i] = (unsigned char)(depth + i);
  uint64_t below = depth == 0 ? (compute(), 0) : recurse(depth - 1);
  uint64_t mine = 0;
  for (int i = 0; i < 160; i++) {
    if (frame[i] != (unsigned char)(depth + i)) { printf("stack frame %d corrupt\n", depth); exit(3); }
    mine += frame[i];
  }
  return below * 31 + mine;
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s DATAFILE\n", argv[0]); return 1; }
  syscall(SYS_close_range, 3, ~0U, 0); /* only what this program opens */
  data_fd = open(argv[1], O_RDONLY);
  if (data_fd < 0) { perror(argv[1]); return 1; }
  for (int i = 0; i < SMALL; i++) { small[i] = malloc(64 + i % 100); memset(small[i], i, 64); }
  big = malloc(BIG);
  memset(big, 1, BIG);
  anon = mmap(NULL, ANON + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (anon == MAP_FAILED) return 1;
  mprotect(anon + ANON, 4096, PROT_NONE); /* a guard page: a mapping of its own */
  int fd = open(argv[1], O_RDONLY);
  fmap_len = 8192;
  fmap = mmap(NULL, fmap_len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (fmap == MAP_FAILED) return 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  sigprocmask(SIG_BLOCK, &block, NULL);
  uint64_t stack = recurse(DEPTH);
  raise(SIGUSR1);
  sigset_t now;
  sigprocmask(SIG_BLOCK, NULL, &now);
  if (usr1_seen != 1 || !sigismember(&now, SIGUSR2)) { printf("signal state lost (handler ran %d times)\n", (int)usr1_seen); return 4; }
  for (size_t i = 0; i < BIG; i += 97) mix(big[i]);
  for (size_t i = 0; i < ANON; i += 31) mix(anon[i]);
  for (int i = 0; i < SMALL; i++) for (int j = 0; j < 64; j++) mix((unsigned char)small[i][j]);
  for (size_t i = 0; i < fmap_len; i++) mix(fmap[i]);
  for (size_t i = 0; i < sizeof global_buf; i++) mix((unsigned char)global_buf[i]);
  printf("%s result %016llx stack %016llx fsum %.12f pid-independent\n", VICTIM_TAG, (unsigned long long)digest,
         (unsigned long long)stack, fsum);
  printf("EXIT-SUCCESS\n");
  return 0;
}
