/* CAPE-1's create(file) in a program (003_45ed75503520c8f4.txt Fig. 2): a complete
 * checkpoint saved by the monitor in the middle of the computation; create() returns 1 here
 * and 0 in a process restarted from the file (cape restart), which must finish with the
 * same result. Heap, an anonymous mapping and a deep stack hold the state across it, and a
 * parallel-region-like window (cape_start/stop) before the call shows the monitor's state
 * does not travel in the file. Usage: create_victim FILE [in-window] (in-window: create()
 * inside a window, which the monitor refuses). */
#include <cape/cape.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t digest = 1469598103934665603ULL;
static void mix(uint64_t v) { digest = (digest ^ v) * 1099511628211ULL; }

static unsigned char *heap, *anon;
static const char *file;

static uint64_t work(int phase) {
  for (int i = 0; i < (1 << 20); i++) {
    heap[(i * 2654435761u) % (1 << 21)] += (unsigned char)(i + phase);
    anon[(i * 40503u) % (1 << 20)] ^= (unsigned char)(i * 3 + phase);
  }
  for (int i = 0; i < (1 << 21); i += 61) mix(heap[i]);
  for (int i = 0; i < (1 << 20); i += 37) mix(anon[i]);
  return digest;
}

static uint64_t deep(int depth) {
  volatile char frame[128];
  memset((char *)frame, depth & 0xff, sizeof frame);
  uint64_t r;
  if (depth == 0) {
    printf("phase 1 %016llx\n", (unsigned long long)work(1));
    int saved = cape_create_complete(file);
    printf("create returned %d\n", saved);
    r = work(2);
  } else {
    r = deep(depth - 1);
  }
  for (size_t i = 0; i < sizeof frame; i++)
    if (frame[i] != (char)(depth & 0xff)) { printf("frame %d corrupt\n", depth); exit(3); }
  return r + (uint64_t)depth;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s FILE [in-window]\n", argv[0]); return 1; }
  file = argv[1];
  if (argc > 2) {
    cape_start();
    cape_create_complete(file);
    printf("create in a window was accepted\n");
    return 0;
  }
  heap = malloc(1 << 21);
  anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!heap || anon == MAP_FAILED) return 1;
  memset(heap, 5, 1 << 21);
  cape_start();
  heap[0] = 1;
  cape_stop();
  uint64_t r = deep(2000);
  printf("result %016llx\n", (unsigned long long)r);
  printf("EXIT-SUCCESS\n");
  return 0;
}
