// `uffd`: userfaultfd write-protection in asynchronous mode (Linux >= 6.7).
//
// Why asynchronous (measured, docs/monitor.md; ../shared/KERNEL-FACTS.md): a WP_ASYNC fault
// costs ~0.7 us and never stops the program; a synchronous fault served by a monitor
// thread costs >= 5 us on the same vCPU and 70-190 us across vCPUs. WP_ASYNC does not give
// a chance to copy a page before its first write, so start() copies the whole tracked set
// (process_vm_readv into THP buffers kept across windows, in 4 MiB pieces by two threads:
// the program is stopped, its vCPU is free) and create() keeps it up to date.
// Kernel writes (read(2) into a tracked buffer) are tracked too, and the monitor's own
// /proc/PID/mem writes are marked as writes, so inject() needs nothing special.
//
// create() does not read the written pages: libcape's copy gadget has the program copy
// them (a memcpy of its own memory) into a small scratch memfd mapped in both processes,
// 256 pages per remote call, and they are diffed there, the program copying the next batch
// into the other half of the scratch meanwhile (on the other vCPU). Measured and not kept: the same
// for start()'s copy into a shared memfd (warm 6.5 vs 14.5 ms per 64 MiB, but the first
// start() 75 vs 16 ms: shmem pages cost 2.6 us each to allocate here, and shmem has no THP).
//
// The userfaultfd is created inside the tracee by an injected userfaultfd(2) and taken by
// the monitor with pidfd_getfd; the tracee's descriptor is closed again at once.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

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
constexpr uint64_t kScanWpMatching = 1 << 0;
constexpr uint64_t kScanCheckWpAsync = 1 << 1;
constexpr unsigned long kPagemapScan = _IOWR('f', 16, pm_scan_arg_v1);
}  // namespace

namespace cape::monitor {

UffdTracker::UffdTracker(pid_t pid, const TrackerOptions& o)
    : pid_(pid), copy_threads_(std::clamp(o.uffd_copy_threads, 1u, 16u)), use_copy_gadget_(o.uffd_copy) {}

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
  for (Copy& c : copies_) pool_.give(std::move(c.buf));
  copies_.clear();
  for (const Area& r : areas) {
    Copy c{r, {}, 0, false};
    uffdio_register reg{};
    reg.range = {r.start, r.size()};
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0) fail_errno("UFFDIO_REGISTER");
    c.registered = true;
    uffdio_writeprotect wp{};
    wp.range = {r.start, r.size()};
    wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
    if (::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) != 0) fail_errno("UFFDIO_WRITEPROTECT");
    c.buf = pool_.take(r.size());
    copies_.push_back(std::move(c));
  }
  // Copy after protecting: a write from another thread in between is then marked. In 4 MiB
  // pieces shared by copy_threads_ threads: the program is stopped, its vCPUs are free.
  struct Piece {
    Copy* c;
    uint64_t off, len, got = 0;
  };
  constexpr uint64_t kPiece = 4 << 20;
  std::vector<Piece> pieces;
  for (Copy& c : copies_)
    for (uint64_t off = 0; off < c.area.size(); off += kPiece)
      pieces.push_back({&c, off, std::min(kPiece, c.area.size() - off)});
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pieces.size();) {
      Piece& p = pieces[i];
      p.got = t.tracee.read_bytes_fallible(p.c->area.start + p.off, {p.c->buf.data() + p.off, p.len});
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned k = 1; k < copy_threads_ && k < pieces.size(); k++) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  // An area that ends unmapped (since the maps were read) is kept up to its first hole.
  for (Copy& c : copies_) c.size = c.area.size();
  for (const Piece& p : pieces)
    if (p.got < p.len && p.off + p.got < p.c->size) p.c->size = (p.off + p.got) & ~(kPageSize - 1);
}


void UffdTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  constexpr size_t kVec = 512;
  constexpr uint64_t kChunk = 64 * kPageSize;
  std::vector<page_region_v1> vec(kVec);
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
        uint8_t* orig = p.c->buf.data() + (p.start + off - p.c->area.start);
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

  for (Copy& c : copies_) {
    uint64_t from = c.area.start, end = c.area.start + c.size;
    while (from < end) {
      pm_scan_arg_v1 arg{};
      arg.size = sizeof arg;
      arg.flags = kScanWpMatching | kScanCheckWpAsync;  // report and protect again
      arg.start = from;
      arg.end = end;
      arg.vec = reinterpret_cast<uint64_t>(vec.data());
      arg.vec_len = kVec;
      arg.category_mask = kPageIsWritten;
      arg.return_mask = kPageIsWritten;
      long n = ::ioctl(pagemap_.get(), kPagemapScan, &arg);
      if (n < 0) {
        if (errno == ENOENT || errno == EINVAL) break;  // unmapped by the program since start()
        fail_errno("PAGEMAP_SCAN");
      }
      for (long i = 0; i < n; i++) {
        uint64_t s = vec[i].start, e = std::min<uint64_t>(vec[i].end, end);
        if (scratch_) {
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
            uint8_t* orig = c.buf.data() + (s + off - c.area.start);
            ++pages_visited;
            visit(s + off, {orig, kPageSize}, {cur.data() + off, kPageSize});
            std::memcpy(orig, cur.data() + off, kPageSize);
          }
          if (got < len) break;  // unmapped meanwhile
          s += len;
        }
      }
      // A full vector may come with a stale walk_end (KERNEL-FACTS.md): go on from the
      // last region reported; fewer regions than asked means the walk is complete.
      if (static_cast<size_t>(n) < kVec) break;
      from = vec[kVec - 1].end;
    }
  }
  if (scratch_) drain();
  if (remote) remote->restore();
}

void UffdTracker::stop(const StoppedThread& t) {
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
