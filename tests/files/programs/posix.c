/* The POSIX calls: creat, open(O_RDWR), pwrite, truncate, open(O_RDONLY), unlink, openat with
 * O_APPEND, before and between regions. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 400
static int a[N];

int main(void) {
  int fd = creat("p.bin", 0644);
  if (fd < 0) { perror("creat"); return 1; }
  for (int i = 0; i < N; i++) a[i] = i * 3;
  if (write(fd, a, sizeof a) != (ssize_t)sizeof a) return 1;
  close(fd);
  fd = open("p.bin", O_RDWR);
  int seven = 7;
  if (fd < 0 || pwrite(fd, &seven, sizeof seven, 10 * sizeof(int)) != sizeof seven) return 1;
  close(fd);
  if (truncate("p.bin", (N / 2) * sizeof(int)) != 0) { perror("truncate"); return 1; }
  fd = open("p.bin", O_RDONLY);
  ssize_t got = read(fd, a, sizeof a);
  close(fd);
  long s = 0;
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < N / 2; i++) s += a[i];
  int d = openat(AT_FDCWD, "p.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
  char line[64];
  int len = snprintf(line, sizeof line, "read %zd sum %ld\n", got, s);
  if (d < 0 || write(d, line, len) != len) return 1;
  close(d);
  if (unlink("p.bin") != 0) { perror("unlink"); return 1; }
  errno = 0;
  int gone = open("p.bin", O_RDONLY) < 0 && errno == ENOENT;
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < N / 2; i++) s += gone;
  printf("posix read %zd sum %ld gone %d\n", got, s, gone);
  return 0;
}
