// See call_times.h.
#include "monitor/call_times.h"

#include "util/log.h"

namespace cape::monitor {

const char* op_name(int op) {
  static const char* const names[CAPE_OP_COUNT] = {
      "?", "hello", "master", "start", "stop", "create", "inject", "send", "receive", "wait_for", "merge",
      "broadcast", "last_parallel", "node_id", "num_nodes", "set_shared", "set_private", "set_firstprivate",
      "set_lastprivate", "set_copyin", "set_copyprivate", "set_threadprivate", "set_default_none",
      "reduction", "set_ckpt_model", "set_order", "region_begin",
      "create_complete", "cape1_copy", "cape1_diff", "cape1_merge", "cape1_wait_for", "cape1_restart_on",
      "cape1_restart", "cape1_serve", "critical_enter", "critical_exit", "critical_shared", "critical_try",
      "ordered_enter", "cape1_send", "lease_exit"};
  return op > 0 && op < CAPE_OP_COUNT && names[op] ? names[op] : "?";
}

static_assert(CAPE_OP_REGION_BEGIN == 26 && CAPE_OP_CREATE_COMPLETE == 27 && CAPE_OP_C1_SERVE == 34 &&
                  CAPE_OP_CRITICAL_SHARED == 37 && CAPE_OP_ORDERED_ENTER == 39 && CAPE_OP_C1_SEND == 40 && CAPE_OP_COUNT == 42,
              "op_name() follows protocol.h");

void CallTimes::report(int rank) const {
  uint64_t calls = 0;
  double in = 0;
  for (int op = 0; op < CAPE_OP_COUNT; op++) calls += count[op], in += us[op];
  if (calls == 0) return;
  CAPE_LOG_AT(info, "calls") << "rank " << rank << ": " << calls << " runtime calls in " << traps << " traps, "
                             << in / 1000
                             << " ms in the monitor, " << between_us / 1000 << " ms between calls, "
                             << compute_us / 1000 << " ms computing";
  for (int op = 0; op < CAPE_OP_COUNT; op++)
    if (count[op])
      CAPE_LOG_AT(info, "calls") << "  " << op_name(op) << ": " << count[op] << " x " << us[op] / count[op]
                                 << " us";
}

}  // namespace cape::monitor
