// Checkpoints cut and joined by address: what create() and inject() do with the data-sharing
// table's ranges.
#pragma once

#include "ckpt/checkpoint.h"
#include "monitor/interval_set.h"

namespace cape::monitor {

// The bytes of `c` inside `keep`, runs cut at its edges; the header is kept.
ckpt::Checkpoint clip_to(const ckpt::Checkpoint& c, const IntervalSet& keep);
// Appends the runs of `a` and `b` (disjoint address sets) to `out` in address order.
void append_merged(ckpt::Checkpoint& out, const ckpt::Checkpoint& a, const ckpt::Checkpoint& b);

}  // namespace cape::monitor
