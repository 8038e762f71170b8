// The runtime calls that ride on another call's trap (runtime/src/protocol.h: r8, r9; issue 14),
// split from monitor.cpp: which calls libcape may defer, and reading them from the program.
#pragma once

#include <cstdint>
#include <string_view>

#include "monitor/tracee.h"
#include "protocol.h"

namespace cape::monitor {

// The calls libcape may defer: the exchanges' (named: receive, stop, send, wait_for, inject,
// create, region_begin) and, since session 11, the clause calls (set_*, reduction, set_order,
// critical_shared), which answer nothing and take effect at the region's start() (002 Fig. 7).
bool deferrable(int op);

// The calls deferred on one trap, in order, and the bytes of their names (a deferred call's
// a1 points into them: `names_at` is their address in the program). Valid until the next
// read_deferred_calls() of this thread.
struct DeferredCalls {
  uint64_t n = 0;
  const cape_deferred* head = nullptr;  // the first CAPE_MAX_DEFERRED
  const cape_deferred* more = nullptr;  // the rest
  uint64_t names_at = 0;
  std::string_view names;
  const cape_deferred& operator[](uint64_t i) const { return i < CAPE_MAX_DEFERRED ? head[i] : more[i - CAPE_MAX_DEFERRED]; }
};

// Reads the list r8/r9 describe with one process_vm_readv of what is used (a libcape before
// session 11 defers at most CAPE_MAX_DEFERRED calls, in the same layout); a bad r8, or a call
// that may not be deferred, is a UserError (libcape and cape from different versions).
DeferredCalls read_deferred_calls(const Tracee& t, uint64_t r8, uint64_t r9);

}  // namespace cape::monitor
