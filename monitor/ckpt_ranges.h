// Checkpoints cut and joined by address: what create() and inject() do with the data-sharing
// table's ranges.
#pragma once

#include "ckpt/checkpoint.h"
#include "monitor/interval_set.h"

namespace cape::monitor {

// The bytes of `c` inside `keep`, runs cut at its edges; the header is kept.
ckpt::Checkpoint clip_to(const ckpt::Checkpoint& c, const IntervalSet& keep);
// The same, taking `c`: when every run lies inside `keep` (the usual case: DICKPT keeps
// everything but a few saved values), `c` itself is returned, its bytes not copied.
ckpt::Checkpoint clip_to(ckpt::Checkpoint&& c, const IntervalSet& keep);
// Appends the runs of `a` and `b` (disjoint address sets) to `out` in address order.
void append_merged(ckpt::Checkpoint& out, const ckpt::Checkpoint& a, const ckpt::Checkpoint& b);
// The runs of `a` and `b` (disjoint address sets) in address order, with `a`'s header; when
// one of them has no runs the other is moved, not copied (create(): a region's checkpoint
// went through three whole copies, 11% of a Jacobi job's monitor CPU, issue 14).
ckpt::Checkpoint joined(ckpt::Checkpoint&& a, ckpt::Checkpoint&& b);

}  // namespace cape::monitor
