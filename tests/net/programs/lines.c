/* Prints COUNT lines "line I" to stdout, for the tests of output relaying (a reader that
 * goes away: `cape run ... | head -1`). Arguments: COUNT [ignore-sigpipe|default] [anything,
 * e.g. a test's token]. With ignore-sigpipe, a failed write is reported on stderr and the
 * program exits with status 3 (what a program that ignores SIGPIPE sees: EPIPE). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 10;
  if (argc > 2 && strcmp(argv[2], "ignore-sigpipe") == 0) signal(SIGPIPE, SIG_IGN);
  for (long i = 1; i <= count; ++i)
    if (printf("line %ld\n", i) < 0) {
      fprintf(stderr, "lines: write failed: %s\n", strerror(errno));
      return 3;
    }
  if (fflush(stdout) != 0) {
    fprintf(stderr, "lines: write failed: %s\n", strerror(errno));
    return 3;
  }
  return 0;
}
