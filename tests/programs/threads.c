/* Four threads write their own slices of a .bss array and of a heap block inside one
 * start()/stop() window; the test finds exactly those writes in the checkpoint. The threads
 * are made before the window (pthread_create allocates, and an allocation inside it would
 * be in the checkpoint too) and wait for a byte on a pipe (no memory written to wake them). */
#include <cape/cape.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "expect.h"

#define THREADS 4
#define SLICE 3000 /* longs: each slice spans several pages */

long shared_bss[THREADS * SLICE];
static long* heap_block;
static int go[2];

static void* worker(void* arg) {
  long id = (long)arg;
  char c;
  if (read(go[0], &c, 1) != 1) abort();
  for (long i = 0; i < SLICE; i += 29) {
    W("all", "bss", &shared_bss[id * SLICE + i], long, 1000 * id + i + 1);
    W("all", "heap", &heap_block[id * SLICE + i], long, -(1000 * id + i + 1));
  }
  return NULL;
}

int main(void) {
  expect_init();
  heap_block = calloc(THREADS * SLICE, sizeof(long));
  pthread_t t[THREADS];
  if (pipe(go) != 0) return 2;
  for (long i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, worker, (void*)i) != 0) return 2;
  cape_start();
  if (write(go[1], "gogo", THREADS) != THREADS) return 2;
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  cape_create("all");
  cape_stop();
  print_expects();
  return 0;
}
