// The three DirtyTracker implementations (declared together: they are small).
#pragma once

#include <map>
#include <vector>

#include "monitor/dirty_tracker.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

// CAPE-2's way (003_45ed75503520c8f4.txt Sect. III.A): read-only pages, SIGSEGV, copy, unprotect.
class MprotectTracker final : public DirtyTracker {
 public:
  TrackerKind kind() const override { return TrackerKind::mprotect; }
  void start(const StoppedThread& t, const std::vector<Region>& regions) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;
  bool on_fault(const StoppedThread& t, const siginfo_t& info) override;
  void before_write(const StoppedThread& t, uint64_t start, uint64_t end) override;

 private:
  const Region* region_of(uint64_t a) const;
  // Copies [page, page + n pages) and makes it writable (one remote mprotect).
  void unprotect(const StoppedThread& t, uint64_t page, uint64_t n, int prot);
  std::vector<Region> regions_;
  std::map<uint64_t, std::vector<uint8_t>> originals_;  // written pages -> content before
};

// userfaultfd write-protection, asynchronous (WP_ASYNC): the kernel marks written pages
// itself with no stop at all; PAGEMAP_SCAN lists them and protects them again. The
// original content comes from a copy of the tracked set made at start().
class UffdTracker final : public DirtyTracker {
 public:
  explicit UffdTracker(pid_t pid) : pid_(pid) {}
  TrackerKind kind() const override { return TrackerKind::uffd; }
  void start(const StoppedThread& t, const std::vector<Region>& regions) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;

 private:
  void open_uffd(const StoppedThread& t);
  pid_t pid_;
  util::ScopedFd uffd_, pagemap_;
  struct Copy {
    Region region;
    std::vector<uint8_t> bytes;
    bool registered = false;
  };
  std::vector<Copy> copies_;
};

class FullTracker final : public DirtyTracker {
 public:
  TrackerKind kind() const override { return TrackerKind::full; }
  void start(const StoppedThread& t, const std::vector<Region>& regions) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;

 private:
  struct Copy {
    uint64_t start;
    std::vector<uint8_t> bytes;
  };
  std::vector<Copy> copies_;
};

}  // namespace cape::monitor
