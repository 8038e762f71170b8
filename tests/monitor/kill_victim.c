/* The program of tests/monitor/kill_test.cpp: writes its pid to PIDFILE, then
 *   kill_victim PIDFILE spin      start(), then writes memory forever (the test kills it)
 *   kill_victim PIDFILE send      start(), create("x"), send("x", 1) (the Exchange fails)
 *   kill_victim PIDFILE receive   start(), then receive("x") (blocks until the test kills)
 *   kill_victim PIDFILE broadcast start(), create("x"), broadcast("x") (killed meanwhile)
 */
#include <cape/cape.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile long data[4096];

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  cape_start();
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, buf, (size_t)n) != n) return 3;
  close(fd);
  if (strcmp(argv[2], "spin") == 0)
    for (long i = 0;; i++) data[(i * 513) % 4096] = i;
  if (strcmp(argv[2], "send") == 0) {
    cape_create("x");
    cape_send("x", 1);
  }
  if (strcmp(argv[2], "receive") == 0) cape_receive("x");
  if (strcmp(argv[2], "broadcast") == 0) {
    cape_create("x");
    cape_broadcast("x");
  }
  return 0; /* not reached in the tests */
}
