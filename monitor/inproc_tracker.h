// `inproc`: the multithreaded paper's in-process way (000_2e1115959baa0e7d.txt Sect. 3.3), the
// baseline the external trackers are compared with. The program protects the tracked set
// and serves its own write faults (runtime/src/inproc.c); the monitor hands it the areas and
// reads what it kept (runtime/src/protocol.h, CAPE_INPROC_*).
#pragma once

#include <memory>
#include <vector>

#include "monitor/dirty_tracker.h"

namespace cape::monitor {

class InprocTracker final : public DirtyTracker {
 public:
  InprocTracker() = default;
  TrackerKind kind() const override { return TrackerKind::inproc; }
  void start(const StoppedThread& t, const std::vector<Area>& areas) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;
  long start_answer() const override;
  // A write fault the program cannot serve: SIGSEGV blocked (libc blocks every signal in
  // places, e.g. pthread_create), where the kernel forces the default action and resets the
  // handler. The monitor does the handler's work then, and for the rest of the window.
  bool on_fault(const StoppedThread& t, const siginfo_t& info) override;

 private:
  std::unique_ptr<Scratch> scratch_;
  std::vector<Area> areas_;  // page aligned, as the program protects them
  // The stack page holding the boundary: never protected (the runtime's frames below the
  // boundary share it, and libc writes them with every signal blocked, e.g. pthread_create:
  // a fault there would kill), compared with its copy from start() instead.
  uint64_t boundary_page_ = 0;
  bool handler_lost_ = false;  // the kernel reset the program's handler (until the next start)
  std::vector<uint8_t> boundary_copy_;
};

}  // namespace cape::monitor
