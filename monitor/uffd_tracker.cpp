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
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "monitor/interval_set.h"
#include "monitor/remote_syscall.h"
#include "monitor/trackers.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

// Debian 12's headers predate these (values from Linux 6.7 include/uapi).
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
namespace {
struct page_region_v1 {
  uint64_t start, end, categories;
};
struct pm_scan_arg_v1 {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
      category_mask, category_anyof_mask, return_mask;
};
constexpr uint64_t kPageIsWritten = 1 << 1;
constexpr uint64_t kPageIsPresent = 1 << 3;
constexpr uint64_t kPageIsSwapped = 1 << 4;  // also uffd-wp markers of unpopulated pages
constexpr uint64_t kScanWpMatching = 1 << 0;
constexpr uint64_t kScanCheckWpAsync = 1 << 1;
constexpr unsigned long kPagemapScan = _IOWR('f', 16, pm_scan_arg_v1);
}  // namespace

namespace cape::monitor {

UffdTracker::UffdTracker(pid_t pid, const TrackerOptions& o)
    : pid_(pid),
      copy_threads_(std::clamp(o.uffd_copy_threads, 1u, 16u)),
      use_copy_gadget_(o.uffd_copy),
      keep_(o.uffd_keep) {}

void UffdTracker::open_uffd(const StoppedThread& t) {
  long remote_fd;
  {
    AutoRemoteSyscalls remote(pid_, t.tid, t.gadget);
    remote_fd = remote.syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (remote_fd < 0) {
      errno = static_cast<int>(-remote_fd);
      throw UserError(errno_message("--tracker uffd: userfaultfd(2) in the program failed") +
                      " (try --tracker mprotect)");
    }
    util::ScopedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    if (!pidfd.valid()) fail_errno("pidfd_open");
    uffd_.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), remote_fd, 0)));
    int saved = errno;
    long closed = remote.syscall(SYS_close, remote_fd);
    errno = saved;
    if (!uffd_.valid()) fail_errno("pidfd_getfd (taking the program's userfaultfd)");
    if (closed < 0) fail_errno("close in the tracee");
    remote.restore();
  }
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
constexpr size_t kListArea = (kListBytes + 4095) & ~size_t{4095};
constexpr size_t kHalfBytes = kListArea + kCopyBytes;
}  // namespace

void UffdTracker::start(const StoppedThread& t, const std::vector<Area>& areas) {
  if (!uffd_.valid()) open_uffd(t);
  if (!scratch_tried_) {
    scratch_tried_ = true;
    std::string why = "libcape has no copy gadget";
    if (!use_copy_gadget_)
      why = "the program's copies are off";
    else if (has_gadget(t, CAPE_COPY_TAG_OFFSET, CAPE_COPY_TAG))
      scratch_ = Scratch::map(t, t.gadget + CAPE_COPY_TAG_OFFSET, 2 * kHalfBytes, true, &why);
    if (!scratch_) CAPE_LOG_AT(info, "monitor") << "uffd tracker: reading written pages (" << why << ")";
  }
  if (keep_)
    start_kept(t, areas);
  else
    start_whole(t, areas);
}

void UffdTracker::arm(uint64_t start, uint64_t end, bool do_register) {
  if (do_register) {
    uffdio_register reg{};
    reg.range = {start, end - start};
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0) fail_errno("UFFDIO_REGISTER");
  }
  uffdio_writeprotect wp{};
  wp.range = {start, end - start};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  if (::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) != 0) fail_errno("UFFDIO_WRITEPROTECT");
}

bool UffdTracker::scan(uint64_t start, uint64_t end, bool holes, std::vector<Span>& out) {
  constexpr size_t kVec = 512;
  page_region_v1 vec[kVec];
  for (uint64_t from = start; from < end;) {
    pm_scan_arg_v1 arg{};
    arg.size = sizeof arg;
    arg.start = from;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(vec);
    arg.vec_len = kVec;
    if (holes) {  // neither present nor swapped nor a marker
      arg.flags = kScanCheckWpAsync;
      arg.category_inverted = arg.category_mask = kPageIsPresent | kPageIsSwapped;
      arg.return_mask = kPageIsPresent;
    } else {  // written, and protect them again
      arg.flags = kScanWpMatching | kScanCheckWpAsync;
      arg.category_mask = arg.return_mask = kPageIsWritten;
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

void UffdTracker::read_runs(const StoppedThread& t, std::vector<Run>& runs) {
  // In pieces of at most 4 MiB (and 256 runs), shared by copy_threads_ threads: the program
  // is stopped, its vCPUs are free. One process_vm_readv per piece.
  constexpr uint64_t kPiece = 4 << 20;
  constexpr size_t kPieceRuns = 256;
  std::vector<Run> split;
  for (const Run& r : runs)
    for (uint64_t o = 0; o < r.len; o += kPiece) split.push_back({r.c, r.off + o, std::min(kPiece, r.len - o)});
  runs.swap(split);
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
        Run& r = runs[k];
        local.push_back({r.c->data() + r.off, r.len});
        remote.push_back({reinterpret_cast<void*>(r.c->area.start + r.off), r.len});
        want += r.len;
      }
      ssize_t got = ::process_vm_readv(t.tracee.pid(), local.data(), local.size(), remote.data(), remote.size(), 0);
      if (got == static_cast<ssize_t>(want)) {
        for (size_t k = i; k < j; k++) runs[k].got = runs[k].len;
        continue;
      }
      for (size_t k = i; k < j; k++)  // memory ended somewhere: run by run
        runs[k].got = t.tracee.read_bytes_fallible(runs[k].c->area.start + runs[k].off,
                                                   {runs[k].c->data() + runs[k].off, runs[k].len});
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned k = 1; k < copy_threads_ && k < pieces.size(); k++) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  // An area that ends unmapped (since the maps were read) is kept up to its first hole.
  for (const Run& r : runs) {
    start_bytes_read += r.got;
    if (r.got < r.len && r.off + r.got < r.c->size) r.c->size = (r.off + r.got) & ~(kPageSize - 1);
  }
}

// The old way: register, protect and copy everything (stop() unregisters).
void UffdTracker::start_whole(const StoppedThread& t, const std::vector<Area>& areas) {
  for (Copy& c : copies_) pool_.give(std::move(c.buf));
  copies_.clear();
  copies_.reserve(areas.size());
  std::vector<Run> runs;
  for (const Area& r : areas) {
    Copy c{r, pool_.take(r.size()), 0, r.size(), false};
    arm(r.start, r.end, true);
    c.registered = true;
    ++start_areas_armed;
    copies_.push_back(std::move(c));
    runs.push_back({&copies_.back(), 0, r.size()});
  }
  // Copy after protecting: a write from another thread in between is then marked.
  read_runs(t, runs);
}

void UffdTracker::start_kept(const StoppedThread& t, const std::vector<Area>& areas) {
  // The copies of the previous window, and where their bytes are now (a buffer taken over
  // by a new copy keeps its address unless it has to grow: see below).
  std::vector<Copy> old = std::move(copies_);
  copies_.clear();
  copies_.reserve(areas.size());  // the runs point into it
  std::sort(old.begin(), old.end(), [](const Copy& a, const Copy& b) { return a.area.start < b.area.start; });
  std::vector<const uint8_t*> old_data;
  for (const Copy& o : old) old_data.push_back(o.data());
  auto old_end = [&](size_t k) { return old[k].area.start + old[k].size; };  // what it holds

  std::vector<Run> runs;
  std::vector<Span> stale;  // pages of the area to read again
  size_t first_old = 0;     // the first old copy that may meet the area
  for (const Area& a : areas) {
    stale.clear();
    // 1. What changed since the last scan (protected again by the scan itself). An area
    //    with a part that is not registered gets everything: registered, protected, read.
    bool whole = !scan(a.start, a.end, false, stale);
    if (whole) {
      arm(a.start, a.end, true);
      ++start_areas_armed;
    } else {
      size_t written = stale.size();
      if (!scan(a.start, a.end, true, stale)) fail_errno("PAGEMAP_SCAN (the area was registered a moment ago)");
      for (size_t i = written; i < stale.size(); i++) arm(stale[i].start, stale[i].end, false);
    }
    // 2. Its copy: the buffer of the old copy in which the area starts (the same area, or one
    //    that grew, shrank or lost its head), else a pooled one; what other old copies hold
    //    of it is copied over (a stack grown down, areas merged).
    while (first_old < old.size() && old_end(first_old) <= a.start) first_old++;
    Copy c{a, {}, 0, a.size(), false};
    std::vector<IntervalSet::Interval> good;
    size_t host = old.size();
    if (first_old < old.size() && old[first_old].area.start <= a.start && old[first_old].buf.size() > 0)
      host = first_old;
    if (host < old.size()) {
      Copy& h = old[host];
      c.off = h.off + (a.start - h.area.start);
      c.buf = std::move(h.buf);
      // Growing moves the buffer; it only has to grow when the area goes past all the old copy
      // holds, so no later area needs old_data[host] (cleared all the same).
      const uint8_t* was = c.buf.data();
      c.buf.grow(c.off + a.size());
      if (c.buf.data() != was) old_data[host] = nullptr;
      if (!whole) good.emplace_back(a.start, std::min(a.end, old_end(host)));
    } else {
      c.buf = pool_.take(a.size());
    }
    if (!whole)
      for (size_t k = first_old; k < old.size() && old[k].area.start < a.end; k++) {
        uint64_t s = std::max(a.start, old[k].area.start), e = std::min(a.end, old_end(k));
        if (k == host || s >= e || !old_data[k]) continue;
        std::memcpy(c.data() + (s - a.start), old_data[k] + (s - old[k].area.start), e - s);
        good.emplace_back(s, e);
      }
    IntervalSet kept = IntervalSet::of(std::move(good));
    std::vector<IntervalSet::Interval> st;
    for (const Span& x : stale) st.emplace_back(x.start, x.end);
    IntervalSet read = IntervalSet::of({{a.start, a.end}}).minus(kept).unite(IntervalSet::of(std::move(st)));
    for (auto [s, e] : kept) start_bytes_kept += e - s;
    copies_.push_back(std::move(c));
    for (auto [s, e] : read) {
      s = std::max(s, a.start), e = std::min(e, a.end);
      if (s < e) runs.push_back({&copies_.back(), s - a.start, e - s});
    }
  }
  // 3. Read after protecting: a write from another thread in between is then marked.
  read_runs(t, runs);
  for (Copy& o : old) pool_.give(std::move(o.buf));
  CAPE_LOG_AT(debug, "monitor") << "uffd start(): " << areas.size() << " areas, " << runs.size() << " runs read, "
                                << start_bytes_read << " bytes read and " << start_bytes_kept
                                << " kept so far, " << start_areas_armed << " areas armed";
}

void UffdTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  constexpr uint64_t kChunk = 64 * kPageSize;
  std::vector<uint8_t> cur;

  // With the scratch: runs of written pages are batched; the program copies a batch into
  // one half of the scratch (one remote call) while the monitor diffs the previous batch,
  // straight from the other half.
  struct Pending {
    Copy* c;
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
        uint8_t* orig = p.c->data() + (p.start + off - p.c->area.start);
        ++pages_visited;
        visit(p.start + off, {orig, kPageSize}, {data + off, kPageSize});
        std::memcpy(orig, data + off, kPageSize);
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
                   });
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

  std::vector<Span> written;
  for (Copy& c : copies_) {
    const uint64_t end = c.area.start + c.size;
    written.clear();
    // Part of the area not registered any more (the program mapped something over it in
    // the window): every page of it may have changed. Those are read (not copied by the
    // program: some may be unmapped now).
    const bool whole = !scan(c.area.start, end, false, written);
    if (whole) written.assign(1, Span{c.area.start, end});
    for (Span w : written) {
      uint64_t s = w.start, e = w.end;
      if (scratch_ && !whole) {
        while (s < e) {
          uint64_t len = std::min<uint64_t>(e - s, kCopyBytes - batch_bytes);
          batch.push_back({&c, s, len});
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
          uint8_t* orig = c.data() + (s + off - c.area.start);
          ++pages_visited;
          visit(s + off, {orig, kPageSize}, {cur.data() + off, kPageSize});
          std::memcpy(orig, cur.data() + off, kPageSize);
        }
        s += got < len ? got + kPageSize : len;  // past a page unmapped meanwhile
      }
    }
  }
  if (scratch_) drain();
  if (remote) remote->restore();
}

void UffdTracker::stop(const StoppedThread& t) {
  if (keep_) return;  // armed until the next start(), which copies what changed meanwhile
  std::vector<Mapping> maps = read_maps(t.tracee.pid());
  for (Copy& c : copies_) {
    if (!c.registered) continue;
    for (const Mapping& m : maps) {
      uint64_t s = std::max(c.area.start, m.start), e = std::min(c.area.end, m.end);
      if (s >= e) continue;
      uffdio_range range{s, e - s};
      if (::ioctl(uffd_.get(), UFFDIO_UNREGISTER, &range) != 0)
        CAPE_LOG_AT(warn, "monitor") << "UFFDIO_UNREGISTER: " << strerror(errno);
    }
  }
  for (Copy& c : copies_) pool_.give(std::move(c.buf));
  copies_.clear();
}

}  // namespace cape::monitor
