#include "monitor/remote_syscall.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "monitor/memory_map.h"
#include "util/error.h"
#include "util/log.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

AutoRemoteSyscalls::AutoRemoteSyscalls(pid_t pid, pid_t tid, uint64_t gadget)
    : pid_(pid), tid_(tid), gadget_(gadget), saved_(Tracee::get_regs(tid)) {}

AutoRemoteSyscalls::~AutoRemoteSyscalls() {
  try {
    restore();
  } catch (const std::exception& e) {
    if (!alive_) return;  // died meanwhile: nothing to restore (the wait that saw it reaped it)
    auto* sys = dynamic_cast<const SystemError*>(&e);
    if (sys && sys->error == ESRCH) {
      // The thread is gone: killed from outside while the call ran (SIGKILL ends a traced
      // thread without a stop). Its death is reported with its signal; no warning on top.
      ::kill(pid_, SIGKILL);
      return;
    }
    // Left with the monitor's registers, the thread would run on at the gadget: end the
    // program instead (the monitor reports its death; an error already on its way wins).
    CAPE_LOG_AT(warn, "monitor") << "cannot restore thread " << tid_ << " after a remote call (" << e.what()
                                 << "): killing the program";
    ::kill(pid_, SIGKILL);
  }
}

void AutoRemoteSyscalls::restore() {
  if (restored_) return;
  restored_ = true;
  if (alive_ && pending_trap_) wait();  // an exception left a launched gadget running
  if (!alive_) return;
  Tracee::set_regs(tid_, saved_);
  for (int sig : deferred_signals_)
    if (::syscall(SYS_tgkill, pid_, tid_, sig) != 0) fail_errno("tgkill (re-sending a deferred signal)");
}

long AutoRemoteSyscalls::syscall(long no, long a1, long a2, long a3, long a4, long a5, long a6) {
  user_regs_struct r = saved_;
  r.rip = gadget_;
  r.rax = static_cast<unsigned long long>(no);
  r.orig_rax = static_cast<unsigned long long>(-1);  // no syscall restart on the way out
  r.rdi = a1;
  r.rsi = a2;
  r.rdx = a3;
  r.r10 = a4;
  r.r8 = a5;
  r.r9 = a6;
  // Mapping calls but mmap's and mbind's (which use r9) pass the maps signal's filter
  // without a notification; the cache is invalidated here instead (start()).
  bool maps = is_mapping_syscall(no);
  if (maps && no != SYS_mmap && no != SYS_mbind) r.r9 = kMonitorMark;
  ++count_;
  CAPE_LOG_AT(debug, "monitor") << "remote syscall " << no << "(" << std::hex << a1 << ", " << a2
                                << ", " << a3 << std::dec << ") in " << tid_;
  start(r, maps);
  return static_cast<long>(wait_for_trap(gadget_ + 3).rax);  // after `syscall` (2) + int3 (1)
}

void AutoRemoteSyscalls::start(const user_regs_struct& regs, bool changes_maps) {
  Tracee::set_regs(tid_, regs);
  if (changes_maps) maps_may_change();
  if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) fail_errno("PTRACE_CONT (remote syscall)");
}

user_regs_struct AutoRemoteSyscalls::wait() {
  uint64_t trap = pending_trap_;
  pending_trap_ = 0;
  return wait_for_trap(trap);
}

user_regs_struct AutoRemoteSyscalls::wait_for_trap(uint64_t trap_rip) {
  for (;;) {
    int raw = 0;
    pid_t got = ::waitpid(tid_, &raw, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail_errno("waitpid (remote syscall)");
    }
    WaitStatus ws{raw};
    if (ws.kind() == WaitStatus::exited || ws.kind() == WaitStatus::signaled) {
      alive_ = false;
      throw TraceeDied(tid_, ws);
    }
    if (ws.kind() == WaitStatus::signal_stop) {
      user_regs_struct now = Tracee::get_regs(tid_);
      if (ws.signal() == SIGTRAP && now.rip == trap_rip) return now;
      // Some other signal hit the thread meanwhile: keep it for later, finish the call.
      siginfo_t si{};
      ::ptrace(PTRACE_GETSIGINFO, tid_, nullptr, &si);
      CAPE_LOG_AT(debug, "monitor") << "remote call: deferring signal " << ws.signal() << " at rip "
                                    << std::hex << now.rip << " addr " << si.si_addr << " code "
                                    << std::dec << si.si_code;
      if ((ws.signal() == SIGSEGV || ws.signal() == SIGBUS) && si.si_code > 0) {
        errno = EFAULT;
        fail_errno("the monitor's code in the program faulted");
      }
      deferred_signals_.push_back(ws.signal());
    }
    // Event stops (a clone in the middle of a syscall cannot happen here) and deferred
    // signals: resume without delivering (the gadget goes on: nothing of the program's runs).
    if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) fail_errno("PTRACE_CONT (remote syscall)");
  }
}

int take_userfaultfd_of(pid_t pid, pid_t tid, uint64_t gadget, const std::string& who, const std::string& instead) {
  AutoRemoteSyscalls remote(pid, tid, gadget);
  long remote_fd = remote.syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (remote_fd < 0) {
    errno = static_cast<int>(-remote_fd);
    throw UserError(errno_message(who + ": userfaultfd(2) in the program failed") + " (" + instead + ")");
  }
  util::ScopedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid()) fail_errno("pidfd_open");
  int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), remote_fd, 0));
  int saved = errno;
  long closed = remote.syscall(SYS_close, remote_fd);
  errno = saved;
  if (fd < 0) fail_errno("pidfd_getfd (taking the program's userfaultfd)");
  if (closed < 0) {
    ::close(fd);
    fail_errno("close in the tracee");
  }
  remote.restore();
  return fd;
}

}  // namespace cape::monitor
