/* Installs its own SIGSEGV handler and faults on purpose inside a start()/stop() window
 * (on a PROT_NONE page and on address 0) while also writing tracked memory: it must get
 * exactly its own faults, and the tracked writes must still be in the checkpoint. */
#include <cape/cape.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include "expect.h"

static sigjmp_buf jump;
static volatile int faults_seen;
long tracked_var[1024];

static void on_segv(int sig) {
  (void)sig;
  faults_seen++;
  siglongjmp(jump, 1);
}

int main(void) {
  expect_init();
  struct sigaction sa = {0};
  sa.sa_handler = on_segv;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, NULL) != 0) return 2;
  char* guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cape_start();
  for (int i = 0; i < 3; i++) {
    W("after", "bss", &tracked_var[i * 512 % 1024 + i], long, 100 + i); /* tracked, between faults */
    if (sigsetjmp(jump, 1) == 0) {
      if (i == 1)
        *(volatile int*)0 = 1;
      else
        guard[i] = 1;
    }
  }
  cape_create("after");
  cape_stop();
  print_expects();
  printf("faults %d\n", faults_seen);
  return faults_seen == 3 ? 0 : 1;
}
