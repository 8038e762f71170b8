/* The program of MonitorSignals (monitor_test.cpp): a fast interval timer whose SIGALRM
 * handler writes tracked memory, while main writes one word in each of 2048 pages of .bss,
 * in a start()/create()/stop() window. Signals often arrive while a write fault is being
 * served, so the handler is delivered to a thread on its way back through the mprotect
 * tracker's resume stub. Prints "buf ADDR", "ticks N" and "ok" when its memory is right. */
#include <cape/cape.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define PAGES 2048
static char buf[PAGES * 4096] __attribute__((aligned(4096)));
static volatile long ticks;
static volatile long in_handler[64];

static void on_alarm(int sig) {
  (void)sig;
  long local[8]; /* a frame with something in it, on whatever stack we are on */
  for (int i = 0; i < 8; i++) local[i] = ticks + i;
  in_handler[ticks % 64] = local[7];
  ticks++;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, NULL);
  cape_start();
  for (int round = 0; round < 3; round++) {
    for (long p = 0; p < PAGES; p++) ((volatile long*)(buf + p * 4096))[1] = p + 1 + round;
    if (round == 0) cape_create("first");
  }
  cape_create("after");
  cape_stop();
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  int ok = 1;
  for (long p = 0; p < PAGES; p++) ok &= ((long*)(buf + p * 4096))[1] == p + 3;
  printf("buf %lx\nticks %ld\n%s\n", (unsigned long)buf, ticks, ok ? "ok" : "bad");
  return ok ? 0 : 1;
}
