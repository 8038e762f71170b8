/* Programs a complete checkpoint must refuse (tests/cape1/restart.sh): each sets up one
 * thing cape cannot restore, prints "ready" on stderr and waits to be checkpointed.
 * Usage: refusals threads|pipe|write|shared|alarm|altstack|child FILE */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *idle(void *arg) { (void)arg; for (;;) pause(); return NULL; }

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  syscall(SYS_close_range, 3, ~0U, 0);
  int fds[2];
  pthread_t t;
  if (!strcmp(argv[1], "threads")) pthread_create(&t, NULL, idle, NULL);
  else if (!strcmp(argv[1], "pipe")) { if (pipe(fds)) return 1; }
  else if (!strcmp(argv[1], "write")) { if (open(argv[2], O_WRONLY | O_CREAT, 0600) < 0) return 1; }
  else if (!strcmp(argv[1], "shared")) {
    if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) return 1;
  } else if (!strcmp(argv[1], "alarm")) {
    alarm(100);
  } else if (!strcmp(argv[1], "altstack")) {
    stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0};
    if (sigaltstack(&ss, NULL)) return 1;
  } else if (!strcmp(argv[1], "child")) {
    if (fork() == 0) { sleep(30); _exit(0); }
  } else return 2;
  fprintf(stderr, "ready\n");
  for (int i = 0; i < 300; i++) usleep(100000);
  return 0;
}
