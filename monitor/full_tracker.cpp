// `full`: no tracking at all; start() copies the tracked set, collect() compares everything
// (CAPE-1's complete checkpoints, 003_45ed75503520c8f4.txt Sect. IV; the oracle of the tests).
#include "monitor/trackers.h"

#include <cstring>

namespace cape::monitor {

void FullTracker::start(const StoppedThread& t, const std::vector<Region>& regions) {
  copies_.clear();
  for (const Region& r : regions) {
    Copy c{r.start, std::vector<uint8_t>(r.size())};
    c.bytes.resize(t.tracee.read_bytes_fallible(r.start, c.bytes));
    copies_.push_back(std::move(c));
  }
}

void FullTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  std::vector<uint8_t> cur;
  for (Copy& c : copies_) {
    cur.resize(c.bytes.size());
    size_t n = t.tracee.read_bytes_fallible(c.start, cur);
    n &= ~(kPageSize - 1);
    for (size_t off = 0; off < n; off += kPageSize) {
      std::span<const uint8_t> o(c.bytes.data() + off, kPageSize), now(cur.data() + off, kPageSize);
      if (std::memcmp(o.data(), now.data(), kPageSize) == 0) continue;
      ++pages_visited;
      visit(c.start + off, o, now);
      std::memcpy(c.bytes.data() + off, now.data(), kPageSize);
    }
  }
}

void FullTracker::stop(const StoppedThread&) { copies_.clear(); }

}  // namespace cape::monitor
