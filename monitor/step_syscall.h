// System calls run inside a stopped process that has no libcape (CAPE-1's `cape checkpoint`
// of any program, and `cape restart` before anything of the program is mapped): the thread
// is pointed at a `syscall` instruction of the [vdso] (its fallbacks have them; any two
// bytes 0f 05 do) and single-stepped over it, so nothing is written into its memory and
// the next instruction need not exist (a restart unmaps the page the call ran from).
//
//   StepSyscalls remote(pid);           // saves the registers; finds the gadget
//   long brk = remote.syscall(SYS_brk, 0);
//   remote.restore();                   // registers back (also in the destructor)
//
// The thread must be in a ptrace stop. A signal that arrives meanwhile is re-sent with
// tgkill once the registers are back.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <vector>

namespace cape::monitor {

class StepSyscalls {
 public:
  explicit StepSyscalls(pid_t pid);
  ~StepSyscalls();
  StepSyscalls(const StepSyscalls&) = delete;
  StepSyscalls& operator=(const StepSyscalls&) = delete;

  long syscall(long no, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0, long a6 = 0);
  const user_regs_struct& saved() const { return saved_; }
  // Run the next calls at `address` (two bytes 0f 05 the caller wrote, when the [vdso] goes).
  void set_gadget(uint64_t address) { gadget_ = address; }
  void restore();

 private:
  pid_t pid_;
  uint64_t gadget_ = 0;
  user_regs_struct saved_{};
  bool restored_ = false;
  std::vector<int> deferred_;
};

// The address of two bytes 0f 05 in the process's [vdso]; throws UserError when there is none.
uint64_t find_syscall_gadget(pid_t pid);

}  // namespace cape::monitor
