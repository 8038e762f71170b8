// Checkpoints laid over each other in program order, and cut by timestamp: what the lock
// service (net/lock_service.h) and a node's critical sections (monitor/critical.h) keep of
// the writes made under a lock (docs/critical.md).
//
//   Checkpoint all = overlay(before, after);     // `after`'s bytes win where both write
//   Checkpoint news = newer_than(log, stamp);    // runs stamped after `stamp`
//   Checkpoint mine = restamped(body, stamp);    // every run stamped `stamp`
#pragma once

#include <cstdint>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {

// `under` with `over` laid on top: every byte `over` writes has its value and timestamp,
// the other bytes of `under` stay (unlike merge(), timestamps decide nothing: `over` is the
// later write of the same program). Mapping changes overlaid the same way. Header: `over`'s.
Checkpoint overlay(const Checkpoint& under, const Checkpoint& over);

// The runs of `c` whose timestamp is above `stamp` (header kept).
Checkpoint newer_than(const Checkpoint& c, uint64_t stamp);

// `c` with every run's timestamp set to `stamp` (reduction runs keep their operator).
Checkpoint restamped(const Checkpoint& c, uint64_t stamp);

}  // namespace cape::ckpt
