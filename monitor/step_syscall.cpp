#include "monitor/step_syscall.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "monitor/memory_map.h"
#include "util/error.h"
#include "util/log.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

uint64_t find_syscall_gadget(pid_t pid) {
  for (const Mapping& m : read_maps(pid)) {
    if (m.path != "[vdso]") continue;
    std::vector<uint8_t> code(m.end - m.start);
    util::ScopedFd mem(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
    if (!mem.valid() || ::pread(mem.get(), code.data(), code.size(), static_cast<off_t>(m.start)) !=
                            static_cast<ssize_t>(code.size()))
      fail_errno("reading the [vdso] of process " + std::to_string(pid));
    for (size_t i = 0; i + 1 < code.size(); ++i)
      if (code[i] == 0x0f && code[i + 1] == 0x05) return m.start + i;
  }
  throw UserError("process " + std::to_string(pid) + " has no [vdso] with a syscall instruction: cape cannot run system calls in it");
}

StepSyscalls::StepSyscalls(pid_t pid) : pid_(pid), gadget_(find_syscall_gadget(pid)) {
  if (::ptrace(PTRACE_GETREGS, pid_, nullptr, &saved_) != 0) fail_errno("PTRACE_GETREGS");
}

StepSyscalls::~StepSyscalls() {
  if (restored_) return;
  try {
    restore();
  } catch (const std::exception& e) {
    CAPE_LOG_AT(error, "monitor") << "cannot put back the registers of process " << pid_ << ": " << e.what();
  }
}

long StepSyscalls::syscall(long no, long a1, long a2, long a3, long a4, long a5, long a6) {
  user_regs_struct r = saved_;
  r.rip = gadget_;
  r.rax = static_cast<unsigned long long>(no);
  r.orig_rax = static_cast<unsigned long long>(-1);  // no syscall restart on the way out of this stop
  r.rdi = static_cast<unsigned long long>(a1);
  r.rsi = static_cast<unsigned long long>(a2);
  r.rdx = static_cast<unsigned long long>(a3);
  r.r10 = static_cast<unsigned long long>(a4);
  r.r8 = static_cast<unsigned long long>(a5);
  r.r9 = static_cast<unsigned long long>(a6);
  if (::ptrace(PTRACE_SETREGS, pid_, nullptr, &r) != 0) fail_errno("PTRACE_SETREGS");
  for (;;) {
    maps_may_change();
    if (::ptrace(PTRACE_SINGLESTEP, pid_, nullptr, nullptr) != 0) fail_errno("PTRACE_SINGLESTEP");
    int status = 0;
    pid_t w;
    do w = ::waitpid(pid_, &status, __WALL);
    while (w < 0 && errno == EINTR);
    if (w < 0) fail_errno("waitpid");
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      restored_ = true;
      throw UserError("process " + std::to_string(pid_) + " died while cape ran a system call in it");
    }
    if (!WIFSTOPPED(status)) continue;
    int sig = WSTOPSIG(status);
    if (sig == SIGTRAP && (status >> 16) == 0) break;
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL) {
      user_regs_struct at;
      ::ptrace(PTRACE_GETREGS, pid_, nullptr, &at);
      throw UserError("a system call (" + std::to_string(no) + ") run in process " + std::to_string(pid_) +
                      " faulted with signal " + std::to_string(sig) + " at " + std::to_string(at.rip));
    }
    if ((status >> 16) == 0 && sig != SIGSTOP) deferred_.push_back(sig);  // a signal that came meanwhile
    // (the step has not run yet: step again from where it is)
  }
  user_regs_struct out;
  if (::ptrace(PTRACE_GETREGS, pid_, nullptr, &out) != 0) fail_errno("PTRACE_GETREGS");
  if (out.rip != gadget_ + 2)
    throw UserError("a system call in process " + std::to_string(pid_) + " did not run (stopped at " +
                    std::to_string(out.rip) + ")");
  return static_cast<long>(out.rax);
}

void StepSyscalls::restore() {
  if (restored_) return;
  restored_ = true;
  if (::ptrace(PTRACE_SETREGS, pid_, nullptr, &saved_) != 0) fail_errno("PTRACE_SETREGS");
  for (int sig : deferred_) ::syscall(SYS_tgkill, pid_, pid_, sig);
}

}  // namespace cape::monitor
