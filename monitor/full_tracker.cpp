// `full`: no tracking at all; start() copies the tracked set, collect() compares everything
// (CAPE-1's complete checkpoints, 003_45ed75503520c8f4.txt Sect. IV; the oracle of the tests).
#include "monitor/trackers.h"

#include <algorithm>
#include <cstring>

namespace cape::monitor {

void FullTracker::start(const StoppedThread& t, const std::vector<Area>& areas) {
  for (Copy& c : copies_) pool_.give(std::move(c.buf));
  copies_.clear();
  for (const Area& r : areas) {
    Copy c{r.start, pool_.take(r.size()), 0};
    c.size = t.tracee.read_bytes_fallible(r.start, {c.buf.data(), r.size()});
    copies_.push_back(std::move(c));
  }
}

void FullTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  constexpr size_t kChunk = 64 * kPageSize;  // read in pieces that stay in the cache
  std::vector<uint8_t> cur(kChunk);
  for (Copy& c : copies_) {
    for (size_t base = 0; base + kPageSize <= c.size; base += kChunk) {
      size_t len = std::min(kChunk, c.size - base);
      size_t n = t.tracee.read_bytes_fallible(c.start + base, {cur.data(), len}) & ~(kPageSize - 1);
      for (size_t off = 0; off < n; off += kPageSize) {
        uint8_t* o = c.buf.data() + base + off;
        if (std::memcmp(o, cur.data() + off, kPageSize) == 0) continue;
        ++pages_visited;
        visit(c.start + base + off, {o, kPageSize}, {cur.data() + off, kPageSize});
        std::memcpy(o, cur.data() + off, kPageSize);
      }
      if (n < len) break;  // unmapped since start()
    }
  }
}

void FullTracker::stop(const StoppedThread&) {
  for (Copy& c : copies_) pool_.give(std::move(c.buf));
  copies_.clear();
}

}  // namespace cape::monitor
