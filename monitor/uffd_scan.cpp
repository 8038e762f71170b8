// `uffd` tracker, its PAGEMAP_SCAN side (split from uffd_tracker.cpp, whose header comment
// says why asynchronous write protection): one ioctl on /proc/PID/pagemap reports the pages
// written (and protects them again), the holes or the populated pages of a range; over the
// hull of several registered ranges it is one call instead of one per range (issue 14).
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "monitor/trackers.h"
#include "util/error.h"

// Debian 12's headers predate these (values from Linux 6.7 include/uapi).
namespace {
struct page_region_v1 {
  uint64_t start, end, categories;
};
struct pm_scan_arg_v1 {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
      category_mask, category_anyof_mask, return_mask;
};
constexpr uint64_t kPageIsWpAllowed = 1 << 0;
constexpr uint64_t kPageIsWritten = 1 << 1;
constexpr uint64_t kPageIsPresent = 1 << 3;
constexpr uint64_t kPageIsSwapped = 1 << 4;  // also uffd-wp markers of unpopulated pages
constexpr uint64_t kScanWpMatching = 1 << 0;
constexpr uint64_t kScanCheckWpAsync = 1 << 1;
constexpr unsigned long kPagemapScan = _IOWR('f', 16, pm_scan_arg_v1);
}  // namespace

namespace cape::monitor {

bool UffdTracker::scan(uint64_t start, uint64_t end, Scan what, std::vector<Span>& out, bool hull) {
  constexpr size_t kVec = 512;
  page_region_v1 vec[kVec];
  for (uint64_t from = start; from < end;) {
    pm_scan_arg_v1 arg{};
    arg.size = sizeof arg;
    arg.start = from;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(vec);
    arg.vec_len = kVec;
    switch (what) {
      case Scan::written:  // and protect them again
        arg.flags = kScanWpMatching | kScanCheckWpAsync;
        arg.category_mask = arg.return_mask = kPageIsWritten;
        break;
      case Scan::written_peek:
        arg.flags = kScanCheckWpAsync;
        arg.category_mask = arg.return_mask = kPageIsWritten;
        break;
      case Scan::holes:  // neither present nor swapped nor a marker
        arg.flags = kScanCheckWpAsync;
        arg.category_inverted = arg.category_mask = kPageIsPresent | kPageIsSwapped;
        arg.return_mask = kPageIsPresent;
        break;
      case Scan::populated:
        arg.category_anyof_mask = arg.return_mask = kPageIsPresent | kPageIsSwapped;
        break;
      case Scan::present:
        arg.category_mask = arg.return_mask = kPageIsPresent;
        break;
    }
    if (hull) {
      // Over ranges that are all registered (scan_hull): what is not registered in between
      // is skipped (PM_SCAN_WP_MATCHING) or left out of the categories (PAGE_IS_WPALLOWED),
      // not a failure.
      arg.flags &= ~kScanCheckWpAsync;
      arg.category_mask |= kPageIsWpAllowed;
    }
    long n = ::ioctl(pagemap_.get(), kPagemapScan, &arg);
    // EPERM: not registered (PM_SCAN_CHECK_WPASYNC). ENOENT, EINVAL: unmapped meanwhile.
    if (n < 0 && (errno == EPERM || errno == ENOENT || errno == EINVAL)) return false;
    if (n < 0) fail_errno("PAGEMAP_SCAN");
    for (long i = 0; i < n; i++) {
      Span r{vec[i].start, std::min<uint64_t>(vec[i].end, end)};
      if (!out.empty() && out.back().end == r.start)
        out.back().end = r.end;
      else
        out.push_back(r);
    }
    // A full vector may come with a stale walk_end (KERNEL-FACTS.md): go on from the last
    // region reported; fewer regions than asked means the walk is complete.
    if (static_cast<size_t>(n) < kVec) break;
    from = vec[kVec - 1].end;
  }
  return true;
}

bool UffdTracker::scan_hull(const IntervalSet& ranges, Scan what, std::vector<Span>& out) {
  if (ranges.empty()) return true;
  std::vector<Span> all;
  if (!scan(page_down(ranges[0].first), page_up(ranges[ranges.size() - 1].second), what, all, true)) return false;
  for (const Span& x : all)
    for (auto it = ranges.first_ending_after(x.start); it != ranges.end() && it->first < x.end; ++it) {
      Span r{std::max(x.start, it->first), std::min(x.end, it->second)};
      if (!out.empty() && out.back().end == r.start)
        out.back().end = r.end;
      else
        out.push_back(r);
    }
  return true;
}

// One walk for both: every registered page of the hull is reported with its categories, the
// written ones (WRITTEN) and the holes (none of WRITTEN, PRESENT, SWAPPED: a marker is
// SWAPPED) taken apart here; with `protect`, PM_SCAN_WP_MATCHING protects the written ones
// again (the kernel protects only matching pages that are WRITTEN), as Scan::written does;
// the caller arms the holes as before. The vector holds runs of every kind, the protected
// ones too: a few more entries, one walk fewer (issue 14: a PAGEMAP_SCAN per node and start(),
// digest or inject).
bool UffdTracker::scan_hull_both(const IntervalSet& ranges, bool protect, std::vector<Span>& written,
                                 std::vector<Span>& holes) {
  if (ranges.empty()) return true;
  constexpr size_t kVec = 512;
  page_region_v1 vec[kVec];
  std::vector<Span> w, h;
  auto add = [](std::vector<Span>& out, Span r) {
    if (!out.empty() && out.back().end == r.start)
      out.back().end = r.end;
    else
      out.push_back(r);
  };
  const uint64_t end = page_up(ranges[ranges.size() - 1].second);
  for (uint64_t from = page_down(ranges[0].first); from < end;) {
    pm_scan_arg_v1 arg{};
    arg.size = sizeof arg;
    arg.start = from;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(vec);
    arg.vec_len = kVec;
    arg.flags = protect ? kScanWpMatching : 0;
    arg.category_mask = kPageIsWpAllowed;  // (registered: what lies between is skipped)
    arg.return_mask = kPageIsWritten | kPageIsPresent | kPageIsSwapped;
    long n = ::ioctl(pagemap_.get(), kPagemapScan, &arg);
    if (n < 0 && (errno == EPERM || errno == ENOENT || errno == EINVAL)) return false;
    if (n < 0) fail_errno("PAGEMAP_SCAN");
    for (long i = 0; i < n; i++) {
      Span r{vec[i].start, std::min<uint64_t>(vec[i].end, end)};
      if (vec[i].categories & kPageIsWritten)
        add(w, r);
      else if (!(vec[i].categories & (kPageIsPresent | kPageIsSwapped)))
        add(h, r);
    }
    if (static_cast<size_t>(n) < kVec) break;
    from = vec[kVec - 1].end;
  }
  for (auto [all, out] : {std::pair{&w, &written}, std::pair{&h, &holes}})
    for (const Span& x : *all)
      for (auto it = ranges.first_ending_after(x.start); it != ranges.end() && it->first < x.end; ++it)
        add(*out, Span{std::max(x.start, it->first), std::min(x.end, it->second)});
  return true;
}

bool UffdTracker::scan_both_wanted() const {
  static const bool on = !(std::getenv("CAPE_UFFD_ONE_SCAN") && std::string(std::getenv("CAPE_UFFD_ONE_SCAN")) == "0");
  return on;
}

bool UffdTracker::registered_known(const IntervalSet& ranges) const {
  if (!keep_ || !(registered_epoch_ == maps_epoch(pid_))) return false;
  for (auto [s, e] : ranges)
    if (!registered_.covers(s, e)) return false;
  return true;
}

// After start(): `ranges` are registered (scanned whole, or armed). What was known before
// stays known only if nothing changed the mappings since (was_known).
void UffdTracker::note_registered(const IntervalSet& ranges, bool was_known) {
  registered_ = was_known ? registered_.unite(ranges) : ranges;
  registered_epoch_ = maps_epoch(pid_);
}

}  // namespace cape::monitor
