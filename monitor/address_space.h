// The program's address space as the monitor needs it: its executable, its main thread's
// thread pointer (the TLS pages around it are never tracked, memory_map.h) and the tracked
// set now. The maps are read from /proc/PID/maps on every ask: the program maps and unmaps
// between runtime calls.
//
//   AddressSpace as;
//   as.reset(pid);                                   // launched, or a new image (exec)
//   as.at_runtime_call(tracee, tid, regs.fs_base);   // learns the executable and the TLS
//   std::vector<Area> now = as.tracked(boundary);    // the stack from `boundary` up
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "monitor/memory_map.h"
#include "monitor/tracee.h"

namespace cape::monitor {

class AddressSpace {
 public:
  // A new image (launched or exec'd): forgets what it knew of the old one.
  void reset(pid_t pid);
  pid_t pid() const { return pid_; }

  // At every runtime call of thread `tid`: the executable's path (/proc/PID/exe) once per
  // image, and, when the main thread's thread pointer moved, where its static TLS starts.
  void at_runtime_call(const Tracee& t, pid_t tid, uint64_t fs_base);

  const std::string& exe() const { return exe_; }  // "" before the first runtime call
  // The tracked set now, the main stack cut at `stack_boundary` (0 = the whole stack).
  std::vector<Area> tracked(uint64_t stack_boundary) const;
  // The same from maps already read (read_maps(pid())); with the stamp of cached_maps() they
  // are a copy of (Window::maps_stamp; 0: none), kept as tracked(boundary) keeps it.
  std::vector<Area> tracked(const std::vector<Mapping>& maps, uint64_t stack_boundary) const;
  std::vector<Area> tracked(const std::vector<Mapping>& maps, uint64_t stack_boundary, uint64_t stamp) const;
  static bool keeps_tracked();  // CAPE_TRACKED_KEPT is not 0
  // Where the executable is mapped: read once per image (its mappings never move), not at
  // every create() (issue 14: each read of the maps costs tens of microseconds).
  uint64_t load_base() const;
  // tracked(boundary) asks so far, and how many of them computed the set (the others: kept).
  uint64_t tracked_asks() const { return asks_; }
  uint64_t tracked_computed() const { return computed_; }

 private:
  void find_tls_low(const Tracee& t);
  void forget_kept();
  pid_t pid_ = 0;
  std::string exe_;
  uint64_t tls_ = 0;      // the main thread's fs_base
  uint64_t tls_low_ = 0;  // lowest static TLS block in use (0 = unknown)
  mutable uint64_t load_base_ = 0;  // 0 = not read yet
  // tracked(boundary) kept while the maps it came from are read_maps' cache, unchanged (its
  // stamp): a node computed it ~6 times per region from a copy of the maps (issue 14). Four
  // boundaries live at a time (0, and the stack pointers of the calls that ask: region_begin's,
  // create()'s, ...). CAPE_TRACKED_KEPT=0: computed at every ask, as before (A/B).
  struct Kept {
    uint64_t stamp = 0, boundary = 0, tls = 0, tls_low = 0;
    std::vector<Area> areas;
  };
  mutable std::array<Kept, 4> kept_;
  mutable size_t kept_next_ = 0;
  mutable uint64_t asks_ = 0, computed_ = 0;
  mutable std::mutex kept_mu_;  // (the notifier's thread may ask too)
};

}  // namespace cape::monitor
