#include "monitor/dirty_tracker.h"

#include <sys/mman.h>

#include <new>
#include <utility>

#include "monitor/trackers.h"
#include "util/error.h"

namespace cape::monitor {

PageBuffer::PageBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (bytes >= (2u << 20)) ::madvise(p, bytes, MADV_HUGEPAGE);  // best effort
  p_ = static_cast<uint8_t*>(p);
}
PageBuffer::~PageBuffer() {
  if (p_) ::munmap(p_, size_);
}
PageBuffer::PageBuffer(PageBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)) {}
PageBuffer& PageBuffer::operator=(PageBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) ::munmap(p_, size_);
    p_ = std::exchange(o.p_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

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
  }
  return "?";
}

TrackerKind parse_tracker_kind(const std::string& s) {
  if (s == "mprotect") return TrackerKind::mprotect;
  if (s == "uffd") return TrackerKind::uffd;
  if (s == "full") return TrackerKind::full;
  throw UserError("unknown tracker '" + s + "' (mprotect, uffd or full)");
}

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, pid_t pid) {
  switch (kind) {
    case TrackerKind::mprotect: return std::make_unique<MprotectTracker>();
    case TrackerKind::uffd: return std::make_unique<UffdTracker>(pid);
    case TrackerKind::full: return std::make_unique<FullTracker>();
  }
  return nullptr;
}

}  // namespace cape::monitor
