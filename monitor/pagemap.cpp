#include "monitor/pagemap.h"

#include <algorithm>

namespace cape::monitor {

bool populated_ranges(int pagemap_fd, uint64_t start, uint64_t end, std::vector<std::pair<uint64_t, uint64_t>>& out) {
  out.clear();
  constexpr size_t kVec = 512;
  std::vector<PageRegion> vec(kVec);
  uint64_t from = start;
  while (from < end) {
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.start = from;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(vec.data());
    arg.vec_len = kVec;
    arg.category_anyof_mask = kPageIsPresent | kPageIsSwapped;
    arg.return_mask = kPageIsPresent | kPageIsSwapped;
    long n = ::ioctl(pagemap_fd, kPagemapScan, &arg);
    if (n < 0) {
      out.clear();
      return false;
    }
    for (long i = 0; i < n; i++) {
      uint64_t s = vec[i].start, e = std::min(vec[i].end, end);
      if (!out.empty() && out.back().second == s)
        out.back().second = e;
      else
        out.emplace_back(s, e);
    }
    // A full vector may come with a stale walk_end (KERNEL-FACTS.md): go on from the last
    // range reported; fewer ranges than asked means the walk is complete.
    if (static_cast<size_t>(n) < kVec) break;
    from = vec[kVec - 1].end;
  }
  return true;
}

}  // namespace cape::monitor
