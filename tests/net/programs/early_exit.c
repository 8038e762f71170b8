/* One node's program ends at once with a status, the others after a moment (issue 16, item
 * 11: a slave that ends before every slave has joined).
 *   early_exit RANK STATUS [window]
 * Node RANK returns STATUS; with "window" it first opens a parallel region's window
 * (cape_start), so that its end fails the job at once. The other nodes print a line and
 * return 0 after 200 ms. */
#include <cape/cape.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int who = argc > 1 ? atoi(argv[1]) : 1;
  int status = argc > 2 ? atoi(argv[2]) : 5;
  if (cape_node_id() == who) {
    if (argc > 3 && strcmp(argv[3], "window") == 0) cape_start();
    return status;
  }
  usleep(200000);
  printf("early_exit node=%d done\n", cape_node_id());
  return 0;
}
