/* Dies of a real SIGSEGV inside a start()/stop() window, with a second thread alive:
 * the monitor must print the report (signal, address, both backtraces) and exit 139. */
#include <cape/cape.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static volatile int go, started;

__attribute__((noinline)) static void* sleeper_thread(void* arg) {
  (void)arg;
  started = 1;
  for (;;) pause();
  return NULL;
}

__attribute__((noinline)) void crash_here(volatile int* p) { *p = 42; }

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, sleeper_thread, NULL) != 0) return 2;
  while (!started) sched_yield(); /* so that its backtrace shows sleeper_thread */
  cape_start();
  go = 1;
  crash_here((volatile int*)0x10);
  return 0;
}
