// `uffd`: userfaultfd write-protection in asynchronous mode (Linux >= 6.7).
//
// Why asynchronous (measured, docs/monitor.md; ../shared/KERNEL-FACTS.md): a WP_ASYNC fault
// costs ~0.7 us and never stops the program; a synchronous fault served by a monitor
// thread costs >= 5 us on the same vCPU and 70-190 us across vCPUs. WP_ASYNC does not give
// a chance to copy a page before its first write, so the tracker keeps a copy of the
// tracked set (process_vm_readv into THP buffers, in 4 MiB pieces by two threads: the
// program is stopped, its vCPU is free) and create() keeps it up to date.
// Kernel writes (read(2) into a tracked buffer) are tracked too, and the monitor's own
// /proc/PID/mem writes are marked as writes, so inject() needs nothing special.
//
// The copy outlives the window: stop() leaves the registration and the protection armed, so
// every write between windows (the sequential part, the kernel's, inject()'s) marks its page,
// and the next start() copies only the pages PAGEMAP_SCAN reports written (protecting them
// again), plus what it cannot vouch for: an area with any part not registered (mapped,
// grown by mprotect or replaced since: PM_SCAN_CHECK_WPASYNC fails with EPERM) is
// registered, protected and copied whole, and a range with no page table entry at all
// (dropped by MADV_DONTNEED, which older kernels do not report as written) is protected and
// copied. Copies of areas that moved, split or grew are reused where they still apply.
// (The old way, every window registering, protecting and copying the whole set, is
// TrackerOptions::uffd_keep = false: `cape monitor --uffd-copy-all`.)
//
// create() does not read the written pages: libcape's copy gadget has the program copy
// them (a memcpy of its own memory) into a small scratch memfd mapped in both processes,
// 256 pages per remote call, and they are diffed there, the program copying the next batch
// into the other half of the scratch meanwhile (on the other vCPU). Measured and not kept: the same
// for start()'s copy into a shared memfd (warm 6.5 vs 14.5 ms per 64 MiB, but the first
// start() 75 vs 16 ms: shmem pages cost 2.6 us each to allocate here, and shmem has no THP).
//
// The userfaultfd is created inside the tracee by an injected userfaultfd(2) and taken by
// the monitor with pidfd_getfd; the tracee's descriptor is closed again at once. Closing
// ours (the tracker's end: a new image, the program gone) unregisters everything.
// The PAGEMAP_SCAN calls are in uffd_scan.cpp, the inject() and take_changes() side in
// uffd_inject.cpp.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "monitor/remote_syscall.h"
#include "monitor/trackers.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"
#include "util/scoped_fd.h"

// Debian 12's headers predate these (values from Linux 6.7 include/uapi).
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

namespace cape::monitor {

UffdTracker::UffdTracker(pid_t pid, const TrackerOptions& o)
    : pid_(pid),
      copy_threads_(std::clamp(o.uffd_copy_threads, 1u, 16u)),
      use_copy_gadget_(o.uffd_copy),
      keep_(o.uffd_keep) {
  // A/B switch for the copies' huge pages (docs/monitor.md, "First copy in small pages").
  if (const char* e = std::getenv("CAPE_UFFD_DENSE_HUGE")) {
    char* end = nullptr;
    long v = std::strtol(e, &end, 10);
    if (*e && !*end && v >= 0 && v <= 100)
      dense_huge_ = static_cast<unsigned>(v);
    else
      CAPE_LOG_AT(warn, "monitor") << "CAPE_UFFD_DENSE_HUGE='" << e << "' ignored: want 0-100 (% of a 2 MiB block; 0: no huge pages)";
  }
}

void UffdTracker::open_uffd(const StoppedThread& t) {
  uffd_.reset(take_userfaultfd_of(pid_, t.tid, t.gadget, "--tracker uffd", "try --tracker mprotect"));
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
  if (::ioctl(uffd_.get(), UFFDIO_API, &api) != 0)
    throw UserError(errno_message("--tracker uffd: UFFDIO_API with WP_ASYNC (needs Linux >= 6.7)") +
                    " (try --tracker mprotect)");
  std::string path = "/proc/" + std::to_string(pid_) + "/pagemap";
  pagemap_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!pagemap_.valid()) fail_errno("open " + path);
}

namespace {
// The scratch holds two halves, each a list of runs and the pages they copy: the program
// copies one batch into one half while the monitor diffs the previous batch in the other.
constexpr size_t kListPairs = 2048;                       // runs per copy call
constexpr size_t kListBytes = (kListPairs + 1) * 16;      // {src, len} pairs, zero-length end
constexpr size_t kCopyBytes = 1 << 20;                    // pages per copy call: 256
// Up to this much written, create() reads the pages itself rather than have the program copy them:
// one batch of the program's copies has nothing to overlap with, so it is a remote call's two
// ptrace stops for nothing (gradient's slave part, 66 pages, went through it at 64).
constexpr uint64_t kReadDirectlyBytes = kCopyBytes;
constexpr size_t kListArea = (kListBytes + 4095) & ~size_t{4095};
constexpr size_t kHalfBytes = kListArea + kCopyBytes;
}  // namespace

void UffdTracker::start(const StoppedThread& t, const std::vector<Area>& areas) {
  vouch_ = false;
  const std::optional<IntervalSet> refreshed = std::exchange(refreshed_, std::nullopt);
  const std::optional<IntervalSet> reuse = std::exchange(reuse_, std::nullopt);
  if (!uffd_.valid()) open_uffd(t);
  if (!scratch_tried_) {
    scratch_tried_ = true;
    std::string why = "libcape has no copy gadget";
    if (!use_copy_gadget_)
      why = "the program's copies are off";
    else if (has_gadget(t, CAPE_COPY_TAG_OFFSET, CAPE_COPY_TAG))
      // Not populated: its 2 MiB of shared memory cost ~3-10 ms at the first start() (a page
      // of shmem allocated and zeroed, first touched on this VM), for programs that may never
      // write more than create() reads itself; its pages come at their first use instead.
      scratch_ = Scratch::map(t, t.gadget + CAPE_COPY_TAG_OFFSET, 2 * kHalfBytes, false, &why);
    if (!scratch_) CAPE_LOG_AT(info, "monitor") << "uffd tracker: reading written pages (" << why << ")";
  }
  {
    std::lock_guard lk(drop_mu_);
    dropped_ = IntervalSet();  // (a call between windows: every node made it)
  }
  // The monitor's CPU and page faults too (its other threads included: they are idle here):
  // under load the wall time of a copy into fresh memory swings 10x (issue 14, session 13).
  // Only when the debug line below is printed: two system calls per region otherwise.
  const bool timed = util::log_level("monitor") >= util::LogLevel::debug;
  rusage u0{}, u1{};
  if (timed) ::getrusage(RUSAGE_SELF, &u0);
  auto t0 = std::chrono::steady_clock::now();
  if (keep_ && reuse && refreshed && *refreshed == spans_of(areas)) {
    start_reused(t, *reuse, *refreshed);
    ++starts_reused;
  } else if (keep_) {
    start_kept(t, areas);
  } else {
    start_whole(t, areas);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (timed) ::getrusage(RUSAGE_SELF, &u1);
  auto tv_ms = [](const timeval& a, const timeval& b) { return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_usec - a.tv_usec) / 1e3; };
  const double cpu = tv_ms(u0.ru_utime, u1.ru_utime) + tv_ms(u0.ru_stime, u1.ru_stime);
  start_ms += ms;
  start_cpu_ms += cpu;
  start_faults += static_cast<uint64_t>(u1.ru_minflt - u0.ru_minflt);
  CAPE_LOG_AT(debug, "monitor") << "uffd start(): " << areas.size() << " areas, " << segs_.size()
                                << " copies, " << ms << " ms, " << cpu << " ms CPU, "
                                << u1.ru_minflt - u0.ru_minflt << " page faults (in all " << start_ms << " ms, "
                                << start_cpu_ms << " ms CPU, " << start_faults << " faults); so far "
                                << start_bytes_read << " bytes read (" << start_bytes_fresh << " into fresh memory), "
                                << start_bytes_zeroed << " zeros, " << start_bytes_kept << " kept, "
                                << start_areas_armed << " areas armed, " << starts_reused
                                << " starts on the digest's refresh, " << inject_bytes_taken
                                << " injected bytes taken into the copies";
}

void UffdTracker::refresh_original(uint64_t page, std::span<const uint8_t> bytes) {
  refreshed_.reset();  // (start_after_refresh: something came between)
  vouch_ = false;
  auto it = segs_.upper_bound(page);
  if (it == segs_.begin()) return;
  Seg& g = std::prev(it)->second;
  if (page < g.start || page + bytes.size() > g.end) return;  // no copy of it: read when tracked
  std::memcpy(g.at(page), bytes.data(), bytes.size());
  g.touched = std::max<size_t>(g.touched, g.off + (page - g.start) + bytes.size());
  IntervalSet p = IntervalSet::of({{page, page + bytes.size()}});
  stale_ = stale_.minus(p);
  unconfirmed_ = unconfirmed_.minus(p);
  base_in_copy_ = base_in_copy_.minus(p);
}

const UffdTracker::Seg* UffdTracker::seg_of(uint64_t page) const {
  auto it = segs_.upper_bound(page);
  if (it == segs_.begin()) return nullptr;
  const Seg& g = std::prev(it)->second;
  return page >= g.start && page + kPageSize <= g.end ? &g : nullptr;
}

bool UffdTracker::original(uint64_t page, std::span<uint8_t> out) {
  if (out.size() != kPageSize || !unconfirmed_.contains(page)) return false;
  if (!base_in_copy_.contains(page)) return source_ && source_(page, out.data());
  const Seg* g = seg_of(page);
  if (!g) return false;
  std::memcpy(out.data(), g->at(page), kPageSize);
  return true;
}

void UffdTracker::originals_published(const IntervalSet& pages) {
  refreshed_.reset();  // (start_after_refresh: something came between)
  vouch_ = false;
  IntervalSet now = unconfirmed_.minus(unconfirmed_.minus(pages));
  stale_ = stale_.unite(now);
  unconfirmed_ = unconfirmed_.minus(now);
  base_in_copy_ = base_in_copy_.minus(now);
}

// Write protection off (UFFDIO_WRITEPROTECT without MODE_WP: the kernel makes the entries
// writable): the program's writes take no fault, and PAGEMAP_SCAN reports the pages written
// (no uffd-wp bit), so the next collect()'s scan finds them and protects them again. Only
// inside the copies (what start() registered; a range no longer registered is refused) and
// where the page is here (not invalid: a missing-mode page; not skipped and unpublished).
uint64_t UffdTracker::open_until_collect(const StoppedThread& t, const IntervalSet& pages) {
  refreshed_.reset();  // (start_after_refresh: something came between)
  (void)t;
  if (!keep_ || !uffd_.valid() || pages.empty()) return 0;
  std::vector<IntervalSet::Interval> copies;
  for (auto& [key, g] : segs_) copies.emplace_back(g.start, g.end);
  IntervalSet open = pages.minus(pages.minus(IntervalSet::of(std::move(copies)))).minus(not_here_).minus(unconfirmed_);
  uint64_t n = 0;
  for (auto [s, e] : open) {
    uffdio_writeprotect wp{};
    wp.range = {s, e - s};
    wp.mode = 0;
    // (A failure leaves some pages protected: they fault as before; none is lost.)
    if (::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) == 0) n += (e - s) / kPageSize;
  }
  pages_opened += n;
  return n;
}

void UffdTracker::arm(uint64_t start, uint64_t end, bool do_register) {
  if (do_register) {
    uffdio_register reg{};
    reg.range = {start, end - start};
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    maps_may_change();  // splits the mappings at the range's ends
    if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0) fail_errno("UFFDIO_REGISTER");
  }
  uffdio_writeprotect wp{};
  wp.range = {start, end - start};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  if (::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) != 0) fail_errno("UFFDIO_WRITEPROTECT");
}


// Fresh bytes about to be written into each 2 MiB block of the copies (by the block's address
// here): with dense_huge_ > 0 a block written mostly gets a huge page, one fault and one clear
// instead of up to 512; one written sparsely stays in small pages (a huge page clears all of
// its 2 MiB: session 7). Off by default: on this VM (virtio-balloon free page reporting) a
// huge page is taken from memory the host has let go of, 3-7x dearer than small pages when
// the job starts on an idle machine (docs/monitor.md, "First copy in small pages").
void UffdTracker::huge_where_dense(const std::vector<Fresh>& ranges) {
  constexpr uint64_t kHuge = 2u << 20;
  if (dense_huge_ == 0) return;  // small pages only
  std::map<uint64_t, std::pair<Seg*, uint64_t>> blocks;
  for (const Fresh& f : ranges) {
    Seg& g = *f.g;
    size_t b0 = std::max<size_t>(g.off + (f.lo - g.start), g.touched), b1 = g.off + (f.hi - g.start);
    for (size_t b = b0; b < b1;) {  // (b0 >= b1: nothing fresh)
      uint64_t at = reinterpret_cast<uint64_t>(g.buf.data()) + b, blk = at & ~(kHuge - 1);
      size_t n = std::min<size_t>(b1 - b, blk + kHuge - at);
      auto& [bg, bytes] = blocks[blk];
      bg = &g, bytes += n;
      b += n;
    }
  }
  auto dense = [&](uint64_t bytes) { return bytes * 100 >= kHuge * dense_huge_; };
  for (auto it = blocks.begin(); it != blocks.end();) {
    if (!dense(it->second.second)) {
      ++it;
      continue;
    }
    Seg* g = it->second.first;
    uint64_t from = it->first, to = from + kHuge;  // with the dense blocks that follow in its buffer
    for (++it; it != blocks.end() && it->first == to && it->second.first == g && dense(it->second.second); ++it)
      to += kHuge;
    uint64_t base = reinterpret_cast<uint64_t>(g->buf.data());
    g->buf.huge(from > base ? from - base : 0, to - base);  // (huge() leaves a block past the buffer's ends)
  }
}

void UffdTracker::fill(const StoppedThread& t, const IntervalSet& read, const IntervalSet& zero) {
  auto first_seg = [&](uint64_t a) {  // the first segment that may hold `a` or what follows
    auto it = segs_.upper_bound(a);
    return it == segs_.begin() ? it : std::prev(it);
  };
  // Zeros: only where the buffer may hold something (fresh memory reads as zeros already).
  for (auto [s, e] : zero) {
    for (auto it = first_seg(s); it != segs_.end() && it->second.start < e; ++it) {
      Seg& g = it->second;
      uint64_t lo = std::max(s, g.start), hi = std::min(e, g.end);
      if (lo >= hi) continue;
      size_t b0 = g.off + (lo - g.start), b1 = std::min<size_t>(g.off + (hi - g.start), g.touched);
      if (b0 < b1) std::memset(g.buf.data() + b0, 0, b1 - b0);
      start_bytes_zeroed += hi - lo;
    }
  }
  // Reads: in pieces of at most 4 MiB (and 256 runs), shared by copy_threads_ threads: the
  // program is stopped, its vCPUs are free. One process_vm_readv per piece.
  struct Run {
    Seg* g;
    uint64_t addr, len, got = 0;
  };
  constexpr uint64_t kPiece = 4 << 20;
  constexpr size_t kPieceRuns = 256;
  std::vector<Run> runs;
  std::vector<Fresh> fresh;
  for (auto [s, e] : read)
    for (auto it = first_seg(s); it != segs_.end() && it->second.start < e; ++it) {
      Seg& g = it->second;
      uint64_t lo = std::max(s, g.start), hi = std::min(e, g.end);
      if (lo >= hi) continue;
      fresh.push_back({&g, lo, hi});
      for (uint64_t a = lo; a < hi; a += kPiece) runs.push_back({&g, a, std::min(kPiece, hi - a)});
    }
  huge_where_dense(fresh);
  std::vector<std::pair<size_t, size_t>> pieces;  // [first run, last run)
  for (size_t i = 0; i < runs.size();) {
    size_t j = i;
    uint64_t bytes = 0;
    while (j < runs.size() && j - i < kPieceRuns && (j == i || bytes + runs[j].len <= kPiece)) bytes += runs[j++].len;
    pieces.emplace_back(i, j);
    i = j;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    std::vector<iovec> local, remote;
    for (size_t p; (p = next.fetch_add(1)) < pieces.size();) {
      auto [i, j] = pieces[p];
      local.clear();
      remote.clear();
      uint64_t want = 0;
      for (size_t k = i; k < j; k++) {
        local.push_back({runs[k].g->at(runs[k].addr), runs[k].len});
        remote.push_back({reinterpret_cast<void*>(runs[k].addr), runs[k].len});
        want += runs[k].len;
      }
      ssize_t got = ::process_vm_readv(t.tracee.pid(), local.data(), local.size(), remote.data(), remote.size(), 0);
      if (got == static_cast<ssize_t>(want)) {
        for (size_t k = i; k < j; k++) runs[k].got = runs[k].len;
        continue;
      }
      for (size_t k = i; k < j; k++)  // memory ended somewhere: run by run
        runs[k].got = t.tracee.read_bytes_fallible(runs[k].addr, {runs[k].g->at(runs[k].addr), runs[k].len});
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned k = 1; k < copy_threads_ && k < pieces.size(); k++) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  for (const Run& r : runs) {
    start_bytes_read += r.got;
    Seg& g = *r.g;
    size_t b0 = g.off + (r.addr - g.start), b1 = b0 + r.len;
    if (b1 > g.touched) start_bytes_fresh += b1 - std::max(b0, g.touched);
    g.touched = std::max<size_t>(g.touched, b1);
    // Memory that ends unmapped (since the maps were read): the copy ends at its first hole.
    if (r.got < r.len) g.end = std::min(g.end, page_down(r.addr + r.got));
  }
  for (auto it = segs_.begin(); it != segs_.end();) {
    if (it->second.end > it->second.start) {
      ++it;
      continue;
    }
    drop(it->second);
    it = segs_.erase(it);
  }
}

UffdTracker::Seg UffdTracker::make_seg(uint64_t start, uint64_t end) {
  Seg g;
  g.start = start;
  g.end = end;
  // The smallest spare buffer that is big enough (warm memory), else a new one.
  auto best = spares_.end();
  for (auto it = spares_.begin(); it != spares_.end(); ++it)
    if (it->buf.size() >= end - start && (best == spares_.end() || it->buf.size() < best->buf.size())) best = it;
  if (best == spares_.end()) {
    g.buf = PageBuffer(end - start);
  } else {
    g.buf = std::move(best->buf);
    g.touched = best->touched;
    spares_.erase(best);
  }
  return g;
}

void UffdTracker::drop(Seg& g) {
  if (g.buf.size()) spares_.push_back({std::move(g.buf), g.touched});
}

void UffdTracker::reshape(const IntervalSet& cover) {
  // The steady state (the tracked set as at the last start): every segment lies in the cover
  // and together they fill it, so nothing below would change; the map is not rebuilt, a node
  // per segment (issue 14, session 14).
  {
    uint64_t in_segs = 0, in_cover = 0;
    bool inside = true;
    for (auto& [key, g] : segs_) {
      if (!cover.covers(g.start, g.end)) {
        inside = false;
        break;
      }
      in_segs += g.end - g.start;
    }
    for (auto [s0, e0] : cover) in_cover += e0 - s0;
    if (inside && in_segs == in_cover) return;  // (disjoint segments inside it: they are it)
  }
  std::map<uint64_t, Seg> out;
  // 1. Cut each segment to the cover: it keeps its first piece (its buffer at an offset);
  //    other pieces (the cover lost a middle part) are copied into buffers of their own.
  for (auto& [key, g] : segs_) {
    std::vector<IntervalSet::Interval> pieces;
    for (auto it = cover.first_ending_after(g.start); it != cover.end() && it->first < g.end; ++it)
      pieces.emplace_back(std::max(it->first, g.start), std::min(it->second, g.end));
    for (size_t i = 1; i < pieces.size(); i++) {
      Seg p = make_seg(pieces[i].first, pieces[i].second);
      std::memcpy(p.at(p.start), g.at(p.start), p.end - p.start);
      p.touched = std::max(p.touched, p.off + (p.end - p.start));
      out.emplace(p.start, std::move(p));
    }
    if (pieces.empty()) {
      drop(g);
      continue;
    }
    g.off += pieces[0].first - g.start;
    g.start = pieces[0].first;
    g.end = pieces[0].second;
    out.emplace(g.start, std::move(g));
  }
  segs_.swap(out);
  // 2. What no segment covers: the segment that ends where it begins grows over it (mremap:
  //    no bytes moved; a buffer whose segment shrank before may have the room already),
  //    else a new segment.
  std::vector<IntervalSet::Interval> have;
  for (auto& [key, g] : segs_) have.emplace_back(g.start, g.end);
  for (auto [s, e] : cover.minus(IntervalSet::of(std::move(have)))) {
    auto it = segs_.lower_bound(s);
    if (it != segs_.begin() && std::prev(it)->second.end == s) {
      Seg& g = std::prev(it)->second;
      g.buf.grow(g.off + (e - g.start));
      g.end = e;
      continue;
    }
    Seg g = make_seg(s, e);
    segs_.emplace(s, std::move(g));
  }
}

// The old way: register, protect and copy everything (stop() unregisters).
void UffdTracker::start_whole(const StoppedThread& t, const std::vector<Area>& areas) {
  for (auto& [key, g] : segs_) drop(g);
  segs_.clear();
  for (const Area& r : areas) {
    arm(r.start, r.end, true);
    ++start_areas_armed;
    Seg g = make_seg(r.start, r.end);
    g.registered = true;
    segs_.emplace(r.start, std::move(g));
  }
  // Copy after protecting: a write from another thread in between is then marked.
  fill(t, spans_of(areas), {});
}

void UffdTracker::start_kept(const StoppedThread& t, const std::vector<Area>& areas) {
  std::vector<IntervalSet::Interval> had;
  had.reserve(segs_.size());
  for (auto& [key, g] : segs_) had.emplace_back(g.start, g.end);
  const IntervalSet covered = IntervalSet::of(std::move(had));
  std::vector<IntervalSet::Interval> read, zero;
  std::vector<Span> spans, holes;
  const IntervalSet cover = spans_of(areas);
  const bool was_known = registered_known(IntervalSet());
  // The areas known to be registered: two scans over all of them (written, holes) instead of
  // two per area. Each of those pages is found as step 1 below would, area by area.
  std::vector<Area> one_by_one;
  std::vector<IntervalSet::Interval> known_v;
  for (const Area& a : areas) {
    if (was_known && registered_.covers(a.start, a.end))
      known_v.emplace_back(a.start, a.end);
    else
      one_by_one.push_back(a);
  }
  const IntervalSet known = IntervalSet::of(std::move(known_v));
  spans.clear();
  holes.clear();
  if (!known.empty()) {
    if (scan_both_wanted() ? scan_hull_both(known, true, spans, holes)
                           : scan_hull(known, Scan::written, spans) && scan_hull(known, Scan::holes, holes)) {
      for (const Span& x : spans) read.emplace_back(x.start, x.end);
      for (const Span& x : holes) {
        arm(x.start, x.end, false);
        bool data = std::any_of(areas.begin(), areas.end(),
                                [&](const Area& a) { return a.kind == Area::data && a.start < x.end && x.start < a.end; });
        (data ? read : zero).emplace_back(x.start, x.end);
      }
      for (const Area& a : areas) {
        if (!known.overlaps(a.start, a.end) || covered.covers(a.start, a.end)) continue;  // (nothing new)
        for (auto [s0, e0] : IntervalSet::of({{a.start, a.end}}).minus(covered)) {
          spans.clear();
          if (a.kind == Area::data || !scan(s0, e0, Scan::populated, spans)) spans.assign(1, Span{s0, e0});
          for (const Span& x : spans) read.emplace_back(x.start, x.end);
        }
      }
    } else {
      for (const Area& a : areas)
        if (known.overlaps(a.start, a.end)) one_by_one.push_back(a);
    }
  }
  for (const Area& a : one_by_one) {
    // 1. What changed since the last scan (protected again by the scan itself): the pages
    //    written, and those with no page table entry (dropped: MADV_DONTNEED). An area with
    //    a part that is not registered (mapped or replaced since) is registered, protected
    //    and filled whole: its populated pages read, the others zeros (anonymous memory
    //    that is not populated; a file's, the executable's data, is read).
    spans.clear();
    holes.clear();
    if (scan(a.start, a.end, Scan::written, spans) && scan(a.start, a.end, Scan::holes, holes)) {
      for (const Span& x : spans) read.emplace_back(x.start, x.end);
      for (const Span& x : holes) {
        arm(x.start, x.end, false);
        (a.kind == Area::data ? read : zero).emplace_back(x.start, x.end);
      }
      // 2. What has no copy yet (armed, but not tracked by the previous windows): its
      //    populated pages are read, the rest is zeros (holes and markers, found above).
      for (auto [s, e] : IntervalSet::of({{a.start, a.end}}).minus(covered)) {
        spans.clear();
        if (a.kind == Area::data || !scan(s, e, Scan::populated, spans)) spans.assign(1, Span{s, e});
        for (const Span& x : spans) read.emplace_back(x.start, x.end);
      }
    } else {
      spans.clear();
      bool populated = a.kind != Area::data && scan(a.start, a.end, Scan::populated, spans);
      arm(a.start, a.end, true);  // after that scan: protecting puts markers where no page is
      ++start_areas_armed;
      // With what another thread made present meanwhile (the program should be quiescent).
      if (!populated || !scan(a.start, a.end, Scan::present, spans)) spans.assign(1, Span{a.start, a.end});
      std::vector<IntervalSet::Interval> pop;
      for (const Span& x : spans) pop.emplace_back(x.start, x.end);
      IntervalSet p = IntervalSet::of(std::move(pop));
      for (auto [s, e] : p) read.emplace_back(s, e);
      for (auto [s, e] : IntervalSet::of({{a.start, a.end}}).minus(p)) zero.emplace_back(s, e);
      // (What had no copy is in one of the two: its populated pages read, zeros elsewhere.
      // Reading it whole read every never-touched page of a big .bss at the first start():
      // 96 MB into fresh buffers for paper-repro/mamult.c, 270 ms on each node.)
    }
  }
  // 3. The copies follow the tracked set (cut, grown, new), then the pages found above are
  //    read (after protecting: a write from another thread in between is then marked).
  note_registered(cover, was_known);
  reshape(cover);
  // --sync=lazy's invalid pages are not read (that would fetch them all): the scan above
  // protected them, and refresh_original() gives their copy when one is fetched.
  // Skipped pages never published (collect_skipping): memory holds their bytes (a write
  // since would have marked them), read now.
  IntervalSet r = IntervalSet::of(std::move(read)).unite(unconfirmed_.minus(unconfirmed_.minus(cover))).minus(not_here_);
  IntervalSet z = IntervalSet::of(std::move(zero)).minus(r).minus(not_here_);
  unconfirmed_ = base_in_copy_ = IntervalSet();
  stale_ = stale_.minus(r).minus(z).minus(not_here_);
  stale_ = stale_.minus(stale_.minus(cover));
  cleared_ = cleared_.unite(r).unite(z);  // everything refreshed may have changed
  uint64_t before = start_bytes_read + start_bytes_zeroed;
  fill(t, r, z);
  zeroed_ = std::move(z);
  for (auto [s, e] : cover) start_bytes_kept += e - s;
  start_bytes_kept -= start_bytes_read + start_bytes_zeroed - before;
  // Spare buffers beyond the size of the tracked set are given back (the biggest first).
  uint64_t tracked = 0, spare = 0;
  for (auto [s, e] : cover) tracked += e - s;
  for (const Spare& x : spares_) spare += x.buf.size();
  std::sort(spares_.begin(), spares_.end(), [](const Spare& a, const Spare& b) { return a.buf.size() < b.buf.size(); });
  while (!spares_.empty() && spare > tracked) {
    spare -= spares_.back().buf.size();
    spares_.pop_back();
  }
}

// start() in the same stop as the digest's refresh (start_after_refresh): the copies are what
// memory holds, but for the pages the monitor wrote since (reduction identities, private
// values put back: data_sharing.h), which are read again. Their written marks stay (no
// UFFDIO_WRITEPROTECT each): the window's collect() diffs them against what is read here, and
// --sync=lazy never keeps a variable's page undiffed (Monitor::lazy_undiffed). Nothing else
// can have changed: the program has not run, and any other call on the tracker cancels this.
void UffdTracker::start_reused(const StoppedThread& t, const IntervalSet& written, const IntervalSet& cover) {
  IntervalSet r = written.minus(written.minus(cover)).minus(not_here_);
  stale_ = stale_.minus(r);
  zeroed_ = zeroed_.minus(r);
  cleared_ = cleared_.unite(r);  // (may have changed, for take_changes())
  fill(t, r, {});
}

void UffdTracker::collect_in(const StoppedThread& t, const PageVisitor& visit, const IntervalSet* only,
                             const IntervalSet* skip, std::vector<uint64_t>* skipped) {
  refreshed_.reset();  // (start_after_refresh: something came between)
  vouch_ = false;
  constexpr uint64_t kChunk = 64 * kPageSize;
  std::vector<uint8_t> cur;

  // With the scratch: runs of written pages are batched; the program copies a batch into
  // one half of the scratch (one remote call) while the monitor diffs the previous batch,
  // straight from the other half.
  struct Pending {
    Seg* g;
    uint64_t start, len;
  };
  std::vector<Pending> batch, copying;  // being filled; being copied by the program
  size_t batch_bytes = 0;
  int half = 0;                         // the half `batch` goes to
  std::unique_ptr<AutoRemoteSyscalls> remote;
  auto diff = [&](const std::vector<Pending>& done, int h) {
    const uint8_t* data = scratch_->local() + h * kHalfBytes + kListArea;
    for (const Pending& p : done) {
      for (uint64_t off = 0; off < p.len; off += kPageSize) {
        uint8_t* orig = p.g->at(p.start + off);
        ++pages_visited;
        visit(p.start + off, {orig, kPageSize}, {data + off, kPageSize});
        std::memcpy(orig, data + off, kPageSize);
        // The copy holds data there now: fill() must zero it when the page is replaced.
        p.g->touched = std::max<size_t>(p.g->touched, p.g->off + (p.start + off - p.g->start) + kPageSize);
      }
      data += p.len;
    }
  };
  auto flush = [&] {
    if (batch.empty()) return;
    if (!copying.empty()) remote->wait();  // the program is done with the other half
    auto* list = reinterpret_cast<uint64_t*>(scratch_->local() + half * kHalfBytes);
    for (size_t i = 0; i < batch.size(); i++) list[2 * i] = batch[i].start, list[2 * i + 1] = batch[i].len;
    list[2 * batch.size() + 1] = 0;
    uint64_t base = scratch_->remote() + half * kHalfBytes;
    if (!remote) remote = std::make_unique<AutoRemoteSyscalls>(pid_, t.tid, t.gadget);
    remote->launch(t.gadget + CAPE_COPY_GADGET_OFFSET, t.gadget + CAPE_COPY_TRAP_OFFSET + 1,
                   [&](user_regs_struct& r) {
                     r.rdx = base;
                     r.rdi = base + kListArea;
                   },
                   /*changes_maps=*/false);  // rep movsb: no system call
    if (!copying.empty()) diff(copying, 1 - half);  // meanwhile
    copying.swap(batch);
    batch.clear();
    batch_bytes = 0;
    half = 1 - half;
  };
  auto drain = [&] {
    flush();
    if (copying.empty()) return;
    remote->wait();
    diff(copying, 1 - half);
    copying.clear();
  };

  // What was written, area by area, first: a few pages are read directly (one
  // process_vm_readv each run), cheaper than a remote call's two ptrace stops (issue 14:
  // most of a small region's create()s).
  struct Written {
    Seg* g;
    bool whole;
    std::vector<Span> spans;
  };
  std::vector<Written> all;
  uint64_t written_bytes = 0;
  std::vector<Span> parts;  // of a segment, those to scan: all of it, or what `only` holds
  // Every segment registered as far as the maps say: one scan over all of them.
  std::vector<IntervalSet::Interval> every;
  for (auto& [key, g] : segs_) every.emplace_back(g.start, g.end);
  IntervalSet to_scan = IntervalSet::of(std::move(every));
  if (only) to_scan = to_scan.minus(to_scan.minus(*only));
  std::vector<Span> hull_spans;
  // A segment's written spans: marked as cleared (their marks were), counted, kept.
  auto take = [&](Written&& w) {
    if (w.spans.empty()) return;
    if (keep_) {
      std::vector<IntervalSet::Interval> c;
      for (const Span& x : w.spans) c.emplace_back(x.start, x.end);
      cleared_ = cleared_.unite(IntervalSet::of(std::move(c)));
    }
    for (const Span& x : w.spans) written_bytes += x.end - x.start;
    all.push_back(std::move(w));
  };
  // Not over the hull of a partial collect's pages: the scan protects every written page of
  // the hull again, and those between them would lose their marks unread (a node's words
  // written between its bodies with known writes, lost: docs/critical.md, "Session 9").
  const bool hull = !to_scan.empty() && (!only || to_scan.size() == 1) && registered_known(to_scan) &&
                    scan_hull(to_scan, Scan::written, hull_spans);
  if (hull) {
    size_t i = 0;
    for (auto& [key, g] : segs_) {
      Written w{&g, false, {}};
      for (; i < hull_spans.size() && hull_spans[i].start < g.end; ++i) {
        // Spans were clipped to the segments (which touch only as separate areas): one each.
        Span x{std::max(hull_spans[i].start, g.start), std::min(hull_spans[i].end, g.end)};
        if (x.start < x.end) w.spans.push_back(x);
        if (hull_spans[i].end > g.end) break;  // goes on into the next segment
      }
      take(std::move(w));
    }
  }
  for (auto& [key, g] : segs_) {
    if (hull) break;
    parts.clear();
    if (!only) parts.push_back({g.start, g.end});
    else
      for (auto it = only->first_ending_after(g.start); it != only->end() && it->first < g.end; ++it)
        parts.push_back({std::max(g.start, it->first), std::min(g.end, it->second)});
    for (Span part : parts) {
      Written w{&g, false, {}};
      // Part of it not registered any more (the program mapped something over it in the
      // window): every page may have changed. Those are read (not copied by the program:
      // some may be unmapped now).
      w.whole = !scan(part.start, part.end, Scan::written, w.spans);
      if (w.whole) w.spans.assign(1, part);
      take(std::move(w));
    }
  }
  // Ranges the program dropped in the window (before_drop): read whole, in address order
  // with the segment's written pages (registered still after madvise, the scan does not
  // report them; unmapped now, read_bytes_fallible passes over them).
  IntervalSet dropped;
  {
    std::lock_guard lk(drop_mu_);
    dropped = std::exchange(dropped_, IntervalSet());
  }
  if (only) dropped = dropped.minus(dropped.minus(*only));
  dropped = dropped.minus(unconfirmed_);  // (their copies are not their originals yet)
  if (!dropped.empty()) {
    std::vector<Written> merged;
    size_t i = 0;
    for (auto& [key, g] : segs_) {
      std::vector<IntervalSet::Interval> spans;
      bool whole = false;
      for (; i < all.size() && all[i].g == &g; ++i) {
        whole = whole || all[i].whole;
        for (const Span& x : all[i].spans) spans.emplace_back(x.start, x.end);
      }
      IntervalSet forced = dropped.minus(dropped.minus(IntervalSet::of({{g.start, g.end}})));
      if (!forced.empty()) {
        whole = true;
        if (keep_) cleared_ = cleared_.unite(forced);
      }
      IntervalSet u = IntervalSet::of(std::move(spans)).unite(forced);
      if (u.empty()) continue;
      Written w{&g, whole, {}};
      for (auto [x, y] : u) w.spans.push_back({x, y});
      merged.push_back(std::move(w));
    }
    all.swap(merged);
    written_bytes = 0;
    for (const Written& wr : all)
      for (const Span& x : wr.spans) written_bytes += x.end - x.start;
  }
  // Pages to skip (collect_skipping) are taken out: not read, not visited, listed.
  std::vector<uint64_t> skipped_here;
  if (skip && !skip->empty()) {
    written_bytes = 0;
    for (Written& wr : all) {
      if (!wr.whole) {  // (an area not registered any more: every page read, as above)
        std::vector<Span> rest;
        for (const Span& x : wr.spans) {
          uint64_t from = x.start;
          for (auto it = skip->first_ending_after(x.start); it != skip->end() && it->first < x.end; ++it) {
            uint64_t a = std::max(x.start, page_up(it->first)), b = std::min(x.end, page_down(it->second));
            if (a >= b) continue;
            if (from < a) rest.push_back({from, a});
            for (uint64_t p = a; p < b; p += kPageSize) skipped_here.push_back(p);
            from = b;
          }
          if (from < x.end) rest.push_back({from, x.end});
        }
        wr.spans.swap(rest);
      }
      for (const Span& x : wr.spans) written_bytes += x.end - x.start;
    }
  }
  // Written pages whose copy is stale: the source's bytes are their original.
  if (!stale_.empty() || !unconfirmed_.empty()) {
    std::vector<IntervalSet::Interval> fixed;
    for (Written& wr : all)
      for (const Span& x : wr.spans) {
        if (unconfirmed_.overlaps(x.start, x.end))  // (the templates create once after a skip)
          throw std::logic_error("uffd tracker: a page skipped by this window's last create() is written again "
                                 "before it was published");
        for (auto it = stale_.first_ending_after(x.start); it != stale_.end() && it->first < x.end; ++it)
          for (uint64_t p = std::max(x.start, it->first); p < std::min(x.end, it->second); p += kPageSize) {
            if (!source_ || !source_(p, wr.g->at(p)))
              throw std::logic_error("uffd tracker: the original of page " + ckpt::hex_address(p) + " is lost");
            ++originals_from_source;
            fixed.emplace_back(p, p + kPageSize);
          }
      }
    stale_ = stale_.minus(IntervalSet::of(std::move(fixed)));
  }
  if (!skipped_here.empty()) {
    std::vector<IntervalSet::Interval> sk;
    for (uint64_t p : skipped_here)
      if (!sk.empty() && sk.back().second == p)
        sk.back().second += kPageSize;
      else
        sk.emplace_back(p, p + kPageSize);
    IntervalSet now = IntervalSet::of(std::move(sk));
    base_in_copy_ = base_in_copy_.unite(now.minus(stale_));  // their copy is DATA-0
    stale_ = stale_.minus(now);
    unconfirmed_ = unconfirmed_.unite(now);
    pages_skipped += skipped_here.size();
    skipped->insert(skipped->end(), skipped_here.begin(), skipped_here.end());
  }
  if (dense_huge_ < 100) {  // the copies take the written pages: where they fill fresh blocks mostly
    std::vector<Fresh> fresh;
    for (const Written& wr : all)
      for (const Span& x : wr.spans) fresh.push_back({wr.g, x.start, x.end});
    huge_where_dense(fresh);
  }
  const bool use_program = scratch_ && written_bytes > kReadDirectlyBytes;
  for (Written& wr : all) {
    Seg& g = *wr.g;
    const bool whole = wr.whole;
    for (Span w : wr.spans) {
      uint64_t s = w.start, e = w.end;
      if (use_program && !whole) {
        while (s < e) {
          uint64_t len = std::min<uint64_t>(e - s, kCopyBytes - batch_bytes);
          batch.push_back({&g, s, len});
          batch_bytes += len;
          s += len;
          if (batch_bytes == kCopyBytes || batch.size() == kListPairs) flush();
        }
        continue;
      }
      // Without: read in chunks that stay in the cache, diff, refresh the copy.
      while (s < e) {
        uint64_t len = std::min<uint64_t>(e - s, kChunk);
        cur.resize(len);
        size_t got = t.tracee.read_bytes_fallible(s, cur) & ~(kPageSize - 1);
        for (size_t off = 0; off < got; off += kPageSize) {
          uint8_t* orig = g.at(s + off);
          ++pages_visited;
          visit(s + off, {orig, kPageSize}, {cur.data() + off, kPageSize});
          std::memcpy(orig, cur.data() + off, kPageSize);
          g.touched = std::max<size_t>(g.touched, g.off + (s + off - g.start) + kPageSize);  // as above
        }
        s += got < len ? got + kPageSize : len;  // past a page unmapped meanwhile
      }
    }
  }
  if (use_program) drain();
  if (remote) remote->restore();
}

void UffdTracker::stop(const StoppedThread& t) {
  refreshed_.reset();  // (start_after_refresh: something came between)
  if (keep_) return;  // armed until the next start(), which copies what changed meanwhile
  std::vector<Mapping> maps = read_maps(t.tracee.pid());
  for (auto& [key, g] : segs_) {
    if (!g.registered) continue;
    for (const Mapping& m : maps) {
      uint64_t s = std::max(g.start, m.start), e = std::min(g.end, m.end);
      if (s >= e) continue;
      uffdio_range range{s, e - s};
      if (::ioctl(uffd_.get(), UFFDIO_UNREGISTER, &range) != 0)
        CAPE_LOG_AT(warn, "monitor") << "UFFDIO_UNREGISTER: " << strerror(errno);
    }
  }
  maps_may_change();
  for (auto& [key, g] : segs_) drop(g);
  segs_.clear();
}

}  // namespace cape::monitor
