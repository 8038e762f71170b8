// PAGEMAP_SCAN on /proc/PID/pagemap (Linux >= 6.7; man PAGEMAP_SCAN(2const)): which pages of a
// range are in some category, without reading them. Debian 12's headers predate it, so the
// structures and constants are spelled out here (values from Linux 6.7 include/uapi/linux/fs.h).
#pragma once

#include <sys/ioctl.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace cape::monitor {

struct PageRegion {
  uint64_t start, end, categories;
};
struct PmScanArg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
      category_mask, category_anyof_mask, return_mask;
};
inline constexpr uint64_t kPageIsWpAllowed = 1 << 0;
inline constexpr uint64_t kPageIsWritten = 1 << 1;
inline constexpr uint64_t kPageIsPresent = 1 << 3;
inline constexpr uint64_t kPageIsSwapped = 1 << 4;
inline constexpr uint64_t kScanWpMatching = 1 << 0;
inline constexpr uint64_t kScanCheckWpAsync = 1 << 1;
inline constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);

// The pages of [start, end) that hold data (present or swapped out), as sorted ranges; the
// others have never been written and read as zeros. Empty and false when the scan fails
// (an older kernel): the caller then reads everything.
bool populated_ranges(int pagemap_fd, uint64_t start, uint64_t end, std::vector<std::pair<uint64_t, uint64_t>>& out);

}  // namespace cape::monitor
