#include "monitor/ckpt_ranges.h"

#include <utility>

namespace cape::monitor {

ckpt::Checkpoint clip_to(const ckpt::Checkpoint& c, const IntervalSet& keep) {
  ckpt::Checkpoint out = c.header();
  for (const ckpt::Run& r : c.runs)
    for (auto it = keep.first_ending_after(r.address); it != keep.end() && it->first < r.end(); ++it)
      out.append_from(c, r, it->first, it->second);
  return out;
}

ckpt::Checkpoint clip_to(ckpt::Checkpoint&& c, const IntervalSet& keep) {
  for (const ckpt::Run& r : c.runs) {
    auto it = keep.first_ending_after(r.address);
    if (it == keep.end() || it->first > r.address || it->second < r.end()) return clip_to(std::as_const(c), keep);
  }
  return std::move(c);
}

ckpt::Checkpoint joined(ckpt::Checkpoint&& a, ckpt::Checkpoint&& b) {
  if (b.runs.empty()) return std::move(a);
  ckpt::Checkpoint out = a.header();
  if (a.runs.empty()) {
    out.runs = std::move(b.runs);
    out.bytes = std::move(b.bytes);
    return out;
  }
  out.bytes.reserve(a.bytes.size() + b.bytes.size());
  out.runs.reserve(a.runs.size() + b.runs.size());
  append_merged(out, a, b);
  return out;
}

void append_merged(ckpt::Checkpoint& out, const ckpt::Checkpoint& a, const ckpt::Checkpoint& b) {
  size_t i = 0, j = 0;
  while (i < a.runs.size() || j < b.runs.size()) {
    bool take_a = j == b.runs.size() || (i < a.runs.size() && a.runs[i].address < b.runs[j].address);
    const ckpt::Checkpoint& src = take_a ? a : b;
    const ckpt::Run& r = take_a ? a.runs[i++] : b.runs[j++];
    out.append_from(src, r);
  }
}

}  // namespace cape::monitor
