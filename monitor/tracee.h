// A traced process as the monitor sees it: its memory (read through process_vm_readv,
// written through /proc/PID/mem so that read-only pages can be written too), its threads'
// registers.
//
//   Tracee t(pid);
//   t.read_bytes(remote, local_span);          // throws on a short read
//   user_regs_struct r = t.get_regs(tid);      // the thread must be ptrace-stopped
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"  // fail_errno
#include "util/scoped_fd.h"
#include "util/wait_status.h"

namespace cape::monitor {

inline constexpr uint64_t kPageSize = 4096;
inline uint64_t page_down(uint64_t a) { return a & ~(kPageSize - 1); }
inline uint64_t page_up(uint64_t a) { return (a + kPageSize - 1) & ~(kPageSize - 1); }

using cape::WaitStatus;  // util/wait_status.h, here for the monitor's callers

class Tracee {
 public:
  explicit Tracee(pid_t pid);
  pid_t pid() const { return pid_; }

  void read_bytes(uint64_t remote, std::span<uint8_t> out) const;
  // Fewer bytes than asked when the range runs into unmapped memory.
  size_t read_bytes_fallible(uint64_t remote, std::span<uint8_t> out) const;
  // Through /proc/PID/mem: works on write-protected pages (mprotect and uffd WP_ASYNC).
  void write_bytes(uint64_t remote, std::span<const uint8_t> data) const;
  // The pages write_bytes() wrote since the last take_written() ([start, end) pairs; `overflow`:
  // more writes than it keeps). A uffd start() made in the same stop as the digest's refresh
  // reads only those again (DirtyTracker::start_after_refresh).
  struct Written {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    bool overflow = false;
  };
  Written take_written() const { return std::exchange(written_, Written{}); }
  std::string read_c_string(uint64_t remote, size_t max = 4096) const;
  // The same, for a string the program cannot change without a mapping call (it lies in a
  // read-only mapping: the translator's region sites, the checkpoints' names): read once
  // while the maps epoch stays the same (memory_map.h; a read per runtime call before,
  // issue 14).
  std::string read_constant_string(uint64_t remote) const;
  // /proc/PID/mem of this image, open for reading and writing (the injector writes through it).
  int mem_fd() const { return mem_.get(); }
  // /proc/PID/pagemap of this image (PAGEMAP_SCAN), opened at the first use and kept (an
  // open per region's digest, issue 14); -1 when it cannot be opened.
  int pagemap_fd() const;
  // Does the program have one thread? The supervisor says how many threads it traces (every
  // thread is traced, PTRACE_O_TRACECLONE, and a new one runs only after its first stop is
  // seen): one is one, without the stat of /proc/PID/task per call it replaced (issue 14);
  // otherwise (more, or not said) /proc/PID/task's link count.
  bool one_thread() const;
  void set_traced_threads(size_t n) { traced_threads_ = n; }

  static user_regs_struct get_regs(pid_t tid);
  static void set_regs(pid_t tid, const user_regs_struct& r);

 private:
  pid_t pid_;
  util::ScopedFd mem_;
  mutable util::ScopedFd pagemap_;
  mutable bool pagemap_tried_ = false;
  size_t traced_threads_ = 0;  // 0: not said
  struct ConstantString {
    uint64_t at = 0, epoch_signal = 0, epoch_monitor = 0;
    std::string text;
  };
  mutable std::array<ConstantString, 8> strings_;
  mutable Written written_;
  mutable size_t next_string_ = 0;
};

}  // namespace cape::monitor
