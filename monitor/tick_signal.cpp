#include "monitor/tick_signal.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace cape::monitor {

bool send_tick(int pidfd, int value) {
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  si.si_signo = SIGSTOP;
  si.si_code = SI_QUEUE;
  si.si_pid = ::getpid();  // (the supervisor checks it: the program cannot queue one itself)
  si.si_uid = ::getuid();
  si.si_value.sival_int = value;
  return ::syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, &si, 0) == 0;
}

bool is_tick(const siginfo_t& si, int value) {
  return si.si_signo == SIGSTOP && si.si_code == SI_QUEUE && si.si_pid == ::getpid() &&
         si.si_value.sival_int == value;
}

}  // namespace cape::monitor
