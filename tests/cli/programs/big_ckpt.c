/* Keeps the monitor busy with big checkpoints, so that a test can kill the program while its
 * monitor works in it (issue 16, item 10): ROUNDS windows, each writing every word of MIB
 * MiB and making a checkpoint of it, then injecting it back (the monitor writes the program's
 * memory and registers).
 *   big_ckpt [MIB] [ROUNDS] */
#include <cape/cape.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
  long mib = argc > 1 ? atol(argv[1]) : 128;
  int rounds = argc > 2 ? atoi(argv[2]) : 20;
  size_t n = (size_t)mib << 20;
  unsigned long *buf = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) return 2;
  memset(buf, 1, n);
  for (int r = 0; r < rounds; r++) {
    cape_start();
    for (size_t i = 0; i < n / sizeof *buf; i++) buf[i] = i * 7 + (unsigned long)r;
    cape_create("big");
    cape_inject("big");
    cape_stop();
  }
  printf("big_ckpt done\n");
  return 0;
}
