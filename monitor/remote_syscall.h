// Running system calls inside a stopped tracee thread (model: rr's AutoRemoteSyscalls).
//
//   {
//     AutoRemoteSyscalls remote(pid, tid, gadget);  // saves the thread's registers
//     long r = remote.syscall(SYS_mprotect, addr, len, PROT_READ);
//     if (r < 0) ... -r is the errno ...
//     remote.restore();                             // registers back; throws if that fails
//   }                                               // (or here, if an exception left early)
//
// The thread must be in a ptrace stop. The call runs at libcape's `syscall; int3` gadget
// (runtime/src/protocol.h), so nothing is written into the tracee's memory. A signal that
// arrives for the thread meanwhile is not lost: it is re-sent with tgkill once the
// registers are back. If the tracee dies meanwhile, TraceeDied is thrown. The destructor
// never throws: when it cannot restore the thread (it would run on at the gadget with the
// monitor's registers) it logs why and kills the program, whose death the monitor reports.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "monitor/maps_signal.h"
#include "monitor/tracee.h"

namespace cape::monitor {

// The program died while the monitor worked in it (SIGKILL from outside, or the kill
// switch); the wait that saw it reaped it.
struct TraceeDied : std::runtime_error {
  TraceeDied(pid_t tid, WaitStatus status)
      : std::runtime_error("the program " + status.describe() + " while the monitor worked in it"),
        tid(tid),
        status(status) {}
  pid_t tid;
  WaitStatus status;
};

class AutoRemoteSyscalls {
 public:
  AutoRemoteSyscalls(pid_t pid, pid_t tid, uint64_t gadget);
  ~AutoRemoteSyscalls();  // restore() if not done yet; never throws
  // Puts the thread's registers back and re-sends the signals that arrived meanwhile (waits
  // for a launch()ed gadget first). Throws if that fails. Once; later calls do nothing.
  void restore();
  AutoRemoteSyscalls(const AutoRemoteSyscalls&) = delete;
  AutoRemoteSyscalls& operator=(const AutoRemoteSyscalls&) = delete;

  // The raw kernel result: >= 0, or -errno.
  long syscall(long no, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
               long a6 = 0);

  // Runs other code of libcape's (a gadget at `entry`, see runtime/src/protocol.h) with the
  // saved registers and those `regs` sets, until it traps with rip == `trap_rip`; returns the
  // registers at the trap. A fault inside it throws (it would only fault again).
  // `changes_maps` false: the gadget makes no system call that may change the mappings (the
  // copy gadget), so the maps cache stays (memory_map.h). r9 holds kMonitorMark unless
  // `set` changes it: the maps signal lets the gadget's mapping calls through (maps_signal.h).
  template <class SetRegs>
  user_regs_struct call(uint64_t entry, uint64_t trap_rip, SetRegs&& set, bool changes_maps = true) {
    user_regs_struct r = saved_;
    r.rip = entry;
    r.orig_rax = static_cast<unsigned long long>(-1);
    r.eflags &= ~0x400ULL;  // DF clear for string instructions
    r.r9 = kMonitorMark;
    set(r);
    start(r, changes_maps);
    return wait_for_trap(trap_rip);
  }
  // The same in two halves, so that the monitor can work while the gadget runs: launch()
  // resumes the thread at `entry` and returns at once; wait() waits for its trap. Between
  // the two nothing else may be asked of this object (the destructor waits if needed).
  template <class SetRegs>
  void launch(uint64_t entry, uint64_t trap_rip, SetRegs&& set, bool changes_maps = true) {
    user_regs_struct r = saved_;
    r.rip = entry;
    r.orig_rax = static_cast<unsigned long long>(-1);
    r.eflags &= ~0x400ULL;
    r.r9 = kMonitorMark;
    set(r);
    start(r, changes_maps);
    pending_trap_ = trap_rip;
  }
  user_regs_struct wait();

  static uint64_t count() { return count_; }  // syscalls run so far (for the bench)

 private:
  void start(const user_regs_struct& r, bool changes_maps);
  user_regs_struct wait_for_trap(uint64_t trap_rip);
  uint64_t pending_trap_ = 0;  // a launch()ed gadget not waited for yet
  pid_t pid_;
  pid_t tid_;
  uint64_t gadget_;
  user_regs_struct saved_;
  bool alive_ = true;
  bool restored_ = false;
  std::vector<int> deferred_signals_;
  static inline uint64_t count_ = 0;
};

// A userfaultfd made inside the program (so that it serves the program's memory) and taken
// into the monitor with pidfd_getfd; the program's own descriptor is closed again. `who`
// names the user's option in the error ("--tracker uffd"), `instead` what to run instead.
// Returns the monitor's descriptor (the caller owns it).
int take_userfaultfd_of(pid_t pid, pid_t tid, uint64_t gadget, const std::string& who, const std::string& instead);

}  // namespace cape::monitor
