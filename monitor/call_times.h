// The monitor's per-call timers (`--log calls:info`, issue 14) and the runtime calls' names
// (protocol.h's CAPE_OP_*), split from monitor.cpp.
#pragma once

#include <chrono>
#include <cstdint>

#include "protocol.h"

namespace cape::monitor {

// The name of a runtime call (CAPE_OP_*), "?" for an unknown one.
const char* op_name(int op);

// Where a region's fixed cost goes (`--log calls:info`, issue 14): per operation the calls
// and the time the monitor spent in them, and the time between calls (the program running,
// plus the two ptrace stops around each call); summed at the end.
struct CallTimes {
  uint64_t count[CAPE_OP_COUNT] = {};
  double us[CAPE_OP_COUNT] = {};
  double between_us = 0;
  // The compute phases: from the call before a create("after") to it, the program running
  // its share of a region (issue 13's bench compares them between the models).
  double compute_us = 0;
  uint64_t traps = 0;  // calls deferred by libcape ride on another call's trap
  std::chrono::steady_clock::time_point last{};
  void report(int rank) const;
};

}  // namespace cape::monitor
