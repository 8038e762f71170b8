/* Prints the descriptors it was started with beyond 0, 1 and 2 (issue 16, item 12: the
 * program must inherit none of cape's), one "fd N" line each, then "fds done". Natively it
 * prints only "fds done". */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return 2;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != dirfd(d)) printf("fd %d\n", fd);
  }
  closedir(d);
  printf("fds done\n");
  return 0;
}
