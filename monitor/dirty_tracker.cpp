#include "monitor/dirty_tracker.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <new>
#include <utility>

#include "monitor/remote_syscall.h"
#include "monitor/trackers.h"
#include "monitor/inproc_tracker.h"
#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

void DirtyTracker::collect_skipping(const StoppedThread& t, const IntervalSet& skip, std::vector<uint64_t>& skipped,
                                    bool keep_originals, const PageVisitor& visit) {
  (void)keep_originals;  // (original() says false: no lazy run uses such a tracker)
  collect(t, [&](uint64_t page, std::span<const uint8_t> orig, std::span<const uint8_t> cur) {
    if (skip.contains(page) && skip.contains(page + kPageSize - 1))
      skipped.push_back(page), ++pages_skipped;
    else
      visit(page, orig, cur);
  });
}

PageBuffer::PageBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  p_ = static_cast<uint8_t*>(p);
}
void PageBuffer::grow(size_t bytes) {
  if (bytes <= size_) return;
  if (!p_) {
    *this = PageBuffer(bytes);
    return;
  }
  // Moves the page tables, not the bytes; the new part costs nothing until it is written.
  // mremap wants one mapping: huge() split it, so the parts are given the same flags again
  // first (the kernel merges them; huge pages already there stay).
  if (split_) ::madvise(p_, size_, MADV_NOHUGEPAGE);
  split_ = false;
  void* p = ::mremap(p_, size_, bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {  // still more than one mapping: a new buffer and a copy
    PageBuffer b(bytes);
    std::memcpy(b.p_, p_, size_);
    *this = std::move(b);
    return;
  }
  p_ = static_cast<uint8_t*>(p);
  size_ = bytes;
}

void PageBuffer::huge(size_t from, size_t to) {
  constexpr uint64_t kHuge = 2u << 20;
  to = std::min(to, size_);
  uint64_t a = (reinterpret_cast<uint64_t>(p_) + from + kHuge - 1) & ~(kHuge - 1);
  uint64_t b = (reinterpret_cast<uint64_t>(p_) + to) & ~(kHuge - 1);
  if (!p_ || a >= b) return;
  ::madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
  split_ = split_ || a != reinterpret_cast<uint64_t>(p_) || b != reinterpret_cast<uint64_t>(p_) + size_;
}

PageBuffer::~PageBuffer() {
  if (p_) ::munmap(p_, size_);
}
PageBuffer::PageBuffer(PageBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)), split_(std::exchange(o.split_, false)) {}
PageBuffer& PageBuffer::operator=(PageBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) ::munmap(p_, size_);
    p_ = std::exchange(o.p_, nullptr);
    size_ = std::exchange(o.size_, 0);
    split_ = std::exchange(o.split_, false);
  }
  return *this;
}

bool has_gadget(const StoppedThread& t, uint64_t offset, const char* tag) {
  if (!t.gadget) return false;
  size_t n = std::strlen(tag) + 1;
  std::vector<uint8_t> got(n);
  return t.tracee.read_bytes_fallible(t.gadget + offset, got) == n && std::memcmp(got.data(), tag, n) == 0;
}

std::unique_ptr<Scratch> Scratch::map(const StoppedThread& t, uint64_t name_in_tracee, size_t bytes,
                                      bool populate, std::string* why, uint64_t at) {
  const long pop = populate ? MAP_POPULATE : 0;
  util::ScopedFd fd;
  {
    AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
    long rfd = remote.syscall(SYS_memfd_create, static_cast<long>(name_in_tracee), MFD_CLOEXEC);
    if (rfd < 0) {
      *why = std::string("memfd_create in the program: ") + strerror(static_cast<int>(-rfd));
      return nullptr;
    }
    util::ScopedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, t.tracee.pid(), 0)));
    if (pidfd.valid()) fd.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), rfd, 0)));
    long addr = -EBADF;
    if (fd.valid() && ::ftruncate(fd.get(), static_cast<off_t>(bytes)) == 0)
      addr = remote.syscall(SYS_mmap, static_cast<long>(at), static_cast<long>(bytes),
                            PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE | pop,
                            rfd, 0);
    remote.syscall(SYS_close, rfd);
    if (addr < 0) {
      *why = std::string("no scratch mapping: ") + strerror(static_cast<int>(-addr));
      return nullptr;
    }
    if (static_cast<uint64_t>(addr) != at) {  // a kernel without MAP_FIXED_NOREPLACE
      remote.syscall(SYS_munmap, addr, static_cast<long>(bytes));
      *why = "the scratch address is taken";
      return nullptr;
    }
    remote.restore();
  }
  void* local = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | static_cast<int>(pop), fd.get(), 0);
  if (local == MAP_FAILED) fail_errno("mmap of the scratch memfd");
  return std::unique_ptr<Scratch>(new Scratch(static_cast<uint8_t*>(local), bytes, at));
}

Scratch::~Scratch() { ::munmap(local_, size_); }

PageBuffer BufferPool::take(size_t bytes) {
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (it->size() >= bytes && (best == free_.end() || it->size() < best->size())) best = it;
  if (best == free_.end()) return PageBuffer(bytes);
  PageBuffer b = std::move(*best);
  free_.erase(best);
  return b;
}

const char* to_string(TrackerKind k) {
  switch (k) {
    case TrackerKind::mprotect: return "mprotect";
    case TrackerKind::uffd: return "uffd";
    case TrackerKind::full: return "full";
    case TrackerKind::inproc: return "inproc";
  }
  return "?";
}

TrackerKind parse_tracker_kind(const std::string& s) {
  if (s == "mprotect") return TrackerKind::mprotect;
  if (s == "uffd") return TrackerKind::uffd;
  if (s == "full") return TrackerKind::full;
  if (s == "inproc") return TrackerKind::inproc;
  throw UserError("unknown tracker '" + s + "' (mprotect, uffd, full or inproc)");
}

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, pid_t pid, const TrackerOptions& options) {
  switch (kind) {
    case TrackerKind::mprotect: return std::make_unique<MprotectTracker>(options);
    case TrackerKind::uffd: return std::make_unique<UffdTracker>(pid, options);
    case TrackerKind::full: return std::make_unique<FullTracker>();
    case TrackerKind::inproc: return std::make_unique<InprocTracker>();
  }
  return nullptr;
}

}  // namespace cape::monitor
