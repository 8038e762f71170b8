/* Four threads write their own slices of a .bss array and of a heap block inside one
 * start()/stop() window; the test finds exactly those writes in the checkpoint. */
#include <cape/cape.h>
#include <pthread.h>
#include <stdlib.h>

#include "expect.h"

#define THREADS 4
#define SLICE 3000 /* longs: each slice spans several pages */

long shared_bss[THREADS * SLICE];
static long* heap_block;

static void* worker(void* arg) {
  long id = (long)arg;
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
  cape_start();
  for (long i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, worker, (void*)i) != 0) return 2;
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  cape_create("all");
  cape_stop();
  print_expects();
  return 0;
}
