// --sync=lazy and the program's own mapping calls (lazy.h: before_mapping_call).
//
// Lazy registers the invalid pages in userfaultfd's missing mode page range by page range,
// which splits the program's mappings (a registration is a mapping flag). Most calls do not
// mind (munmap, mprotect and madvise work over several mappings), but mremap moves or resizes
// one mapping only: over a split range it fails with EFAULT (Linux 6.18; before session 9 a
// slave's program died of it, contract.maps_change). And a call that moves, replaces or
// drops pages must not leave lazy's bookkeeping behind: a fresh mapping at an address lazy
// still counted invalid would be registered again at the next start() and served the old
// bytes instead of zeros.
//
// So the maps signal's notifier (maps_signal.h) calls here before it lets such a call go on
// (the caller waits for its answer):
//   mremap   the pages it keeps are made valid (fetched, as at a fault) and their range is
//            registered as before lazy (the uffd tracker's write protection alone, or nothing
//            under mprotect), which joins the split mappings again: the kernel then moves
//            whole pages (userfaultfd without UFFD_FEATURE_EVENT_REMAP would not follow the
//            move: a page still missing at the new place would read as zeros);
//   munmap, mmap(MAP_FIXED), mremap's unmapped parts (a shrink's tail, MREMAP_FIXED's
//            target), brk shrinking: the invalid pages there are forgotten;
//   madvise  MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTNEED_LOCKED: forgotten too; the
//            range stays registered, and a touch gets a zero page (serve_fault), as natively.
// mprotect needs nothing (a fault on a read-only page is still a missing-page event).
//   fork     (fork, clone or clone3 without CLONE_VM, posted as SYS_fork): the child gets a
//            copy of the memory without lazy's registration (no UFFD_FEATURE_EVENT_FORK), so
//            an invalid page would read as zeros there: every invalid page is fetched first
//            (vfork, posix_spawn, system() and popen() share the memory until exec: their
//            faults are served as the program's).
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <string>

#include "monitor/lazy.h"
#include "monitor/map_changes.h"
#include "monitor/memory_map.h"
#include "util/error.h"

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

namespace cape::monitor {

namespace {
constexpr uint64_t kPage = 4096;
uint64_t up(uint64_t a) { return (a + kPage - 1) & ~(kPage - 1); }
IntervalSet within(const IntervalSet& set, uint64_t s, uint64_t e) { return set.minus(set.minus(IntervalSet::of({{s, e}}))); }
}  // namespace

void LazySync::before_mapping_call(long nr, const uint64_t (&a)[6], bool in_window) {
  std::lock_guard lk(mu_);
  if (registered_.empty() || !uffd_.valid()) return;  // nothing lazy here (yet)
  keep_refreshed_ = in_window;
  if (in_window)  // the tracker needs what the dropped pages held (before_drop): fetched
    for (auto [s, e] : dropped_by(nr, a, [this] { return brk_end(); }))
      for (auto [x, y] : within(invalid_, s, e))
        for (uint64_t p = x; p < y;) {
          uint64_t n = same_source(p, y, 64);
          fill(p, n, false);
          p += n * kPage;
        }
  switch (nr) {
    case SYS_mremap: {
      uint64_t from = a[0], old_len = up(a[1]), new_len = up(a[2]), flags = a[3], to = a[4];
      if (from % kPage || new_len == 0) return;  // refused by the kernel
      if (flags & MREMAP_FIXED) forget(to, to + new_len, true);  // unmapped first
      if (old_len > new_len) forget(from + new_len, from + old_len, true);
      if (old_len > 0) make_plain(from, from + std::min(old_len, new_len));
      return;
    }
    case SYS_munmap:
      forget(a[0], a[0] + up(a[1]), true);
      return;
    case SYS_mmap:
      if (a[3] & MAP_FIXED) forget(a[0], a[0] + up(a[1]), true);
      return;
    case SYS_madvise:
      if (a[2] == MADV_DONTNEED || a[2] == MADV_FREE || a[2] == MADV_REMOVE || a[2] == MADV_DONTNEED_LOCKED)
        forget(a[0], a[0] + up(a[1]), false);
      return;
    case SYS_brk:
      if (uint64_t end = a[0] ? brk_end() : 0; end > up(a[0])) forget(up(a[0]), end, true);
      return;
    case SYS_fork:  // any call making a copy of the memory (maps_signal.h): every page valid first
      for (IntervalSet all = invalid_; auto [x, y] : all)
        for (uint64_t p = x; p < y;) {
          uint64_t n = same_source(p, y, 64);
          fill(p, n, false);
          p += n * kPage;
        }
      return;
    default:
      return;
  }
}

void LazySync::forget(uint64_t s, uint64_t e, bool unmapped) {
  if (e <= s) return;
  IntervalSet r = IntervalSet::of({{s, e}});
  for (auto [x, y] : within(invalid_, s, e))
    for (uint64_t p = x; p < y; p += kPage) source_.erase(p);
  invalid_ = invalid_.minus(r);
  if (unmapped) registered_ = registered_.minus(r);
  // Fetched pages not yet given to the tracker (at_call): none of them here any more (in a
  // window the tracker still needs them as originals).
  if (keep_refreshed_) return;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> kept;
  for (auto& [first, bytes] : refreshed_)
    for (uint64_t o = 0; o < bytes.size(); o += kPage)
      if (first + o < s || first + o >= e) kept.emplace_back(first + o, std::vector<uint8_t>(bytes.begin() + o, bytes.begin() + o + kPage));
  refreshed_.swap(kept);
}

void LazySync::make_plain(uint64_t s, uint64_t e) {
  IntervalSet reg = within(registered_, s, e);
  if (reg.empty()) return;
  for (auto [x, y] : within(invalid_, s, e))
    for (uint64_t p = x; p < y;) {
      uint64_t n = same_source(p, y, 64);
      fill(p, n, false);
      p += n * kPage;
    }
  maps_may_change();  // the mappings join again (memory_map.h)
  // Registering again with fewer modes changes nothing (the kernel keeps a superset): off,
  // then write protection alone back (uffd tracker). Off clears the pages' write protection:
  // the tracker counts them written (read again, diffed: never a write missed).
  for (auto [x, y] : reg) {
    uffdio_range off{x, y - x};
    if (::ioctl(uffd_.get(), UFFDIO_UNREGISTER, &off) != 0)
      fail_errno("--sync=lazy: UFFDIO_UNREGISTER of " + ckpt::hex_address(x) + "-" + ckpt::hex_address(y) +
                 " before the program's mremap");
    if (!wp_) continue;
    uffdio_register back{};
    back.range = {x, y - x};
    back.mode = UFFDIO_REGISTER_MODE_WP;
    if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &back) != 0)
      fail_errno("--sync=lazy: UFFDIO_REGISTER (write protection) of " + ckpt::hex_address(x) + "-" + ckpt::hex_address(y) +
                 " before the program's mremap");
  }
  registered_ = registered_.minus(reg);

}

// The brk heap's end: the end of the program's last [heap] mapping (/proc/PID/maps: the
// kernel keeps no other public record of a process's brk; lazy's registrations split it).
uint64_t LazySync::brk_end() const { return program_brk_end(pid_); }  // (map_changes.h)

}  // namespace cape::monitor
