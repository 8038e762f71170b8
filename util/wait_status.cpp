#include "util/wait_status.h"

#include <string.h>
#include <sys/wait.h>

namespace cape {

WaitStatus::Kind WaitStatus::kind() const {
  if (WIFEXITED(raw)) return exited;
  if (WIFSIGNALED(raw)) return signaled;
  if (!WIFSTOPPED(raw)) return other;
  if ((raw >> 16) != 0) return event_stop;
  return signal_stop;  // a group-stop looks the same; PTRACE_GETSIGINFO tells them apart
}
int WaitStatus::exit_code() const { return WEXITSTATUS(raw); }
int WaitStatus::signal() const { return WIFSIGNALED(raw) ? WTERMSIG(raw) : WSTOPSIG(raw); }
int WaitStatus::event() const { return raw >> 16; }
bool WaitStatus::ok() const { return WIFEXITED(raw) && WEXITSTATUS(raw) == 0; }

int WaitStatus::shell_code() const {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return 1;
}

std::string WaitStatus::describe() const {
  switch (kind()) {
    case exited:
      return "exited with status " + std::to_string(exit_code());
    case signaled: {
      const char* name = strsignal(signal());
      return "killed by signal " + std::to_string(signal()) + " (" + (name ? name : "?") + ")" +
             (WCOREDUMP(raw) ? ", core dumped" : "");
    }
    case signal_stop:
      return std::string("stopped by ") + strsignal(signal());
    case event_stop:
      return "ptrace event " + std::to_string(event());
    default:
      return "ended with wait status " + std::to_string(raw);
  }
}

}  // namespace cape
