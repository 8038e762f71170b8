/* The parallel-for template of 001_3036025dc34c4021.txt Fig. 3, written by hand with the
 * cape_* calls: REGIONS parallel loops over a[N]; slave x computes its chunk [lo, hi) and
 * sends its part under the common name "after"; the master merges (wait_for), injects and
 * broadcasts "final". The master prints one line that the tests compare:
 *   fig3 nodes=3 regions=2 sum=... ok
 * Arguments: [regions] [sleep-ms-per-slave-chunk] (the sleep lets a test kill a node
 * mid-region) [anything, e.g. a test's token] [fail=K:S: slave K ends in the first region,
 * after its loop, with exit status S, or by signal -S when S < 0]. */
#include <cape/cape.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096

static long a[N];
static int lo, hi;         /* a slave's chunk, travels in "before" */
static int x, r, i, regions, slaves, nap_ms;
static int fail_node = -1, fail_status; /* the same on every node: from the arguments */

int main(int argc, char **argv) {
  regions = argc > 1 ? atoi(argv[1]) : 2;
  nap_ms = argc > 2 ? atoi(argv[2]) : 0;
  if (argc > 4 && strncmp(argv[4], "fail=", 5) == 0 &&
      sscanf(argv[4] + 5, "%d:%d", &fail_node, &fail_status) != 2)
    return 2;
  slaves = cape_num_nodes() - 1;
  for (r = 0; r < regions; ++r) {
    if (cape_master()) {
      cape_start();
      for (x = 1; x <= slaves; ++x) {
        lo = (x - 1) * N / slaves;
        hi = x * N / slaves;
        cape_create("before");
        cape_send("before", x);
      }
      cape_create("final");
      cape_stop();
      cape_wait_for("after");
      cape_inject("after");
      if (!cape_last_parallel()) {
        cape_merge("final", "after");
        cape_broadcast("final");
      }
    } else {
      /* The name in a buffer reused at once: libcape defers receive() to the next call's
       * trap (docs/monitor.md) and must have copied it. */
      char name[16] = "before";
      cape_receive(name);
      memcpy(name, "zzzzzz", 7);
      cape_inject("before");
      cape_start();
      for (int k = lo; k < hi; ++k) a[k] += (long)k * k + r; /* k: private, in a register */
      if (r == 0 && cape_node_id() == fail_node) {
        if (fail_status < 0) raise(-fail_status);
        exit(fail_status);
      }
      if (nap_ms) {
        struct timespec ts = {nap_ms / 1000, (nap_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
      }
      cape_create("after");
      cape_stop();
      cape_send("after", 0);
      if (!cape_last_parallel()) {
        cape_receive("final");
        cape_inject("final");
      } else {
        exit(0);
      }
    }
  }
  /* Every node holds the whole result now; each checks it, the master prints it. */
  long sum = 0;
  int bad = 0;
  for (i = 0; i < N; ++i) {
    long want = (long)regions * i * i + (long)regions * (regions - 1) / 2;
    if (a[i] != want) ++bad;
    sum += a[i];
  }
  printf("fig3 node=%d nodes=%d regions=%d sum=%ld %s\n", cape_node_id(), cape_num_nodes(),
         regions, sum, bad ? "BAD" : "ok");
  return bad ? 3 : 0;
}
