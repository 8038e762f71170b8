// A waitpid status classified and said in words, the one way the project does it (model: rr's
// WaitStatus). The monitor reads its program's statuses, net/ passes them between nodes and
// cli/ reports its nodes' with it.
//
//   WaitStatus ws{raw};
//   if (ws.kind() == WaitStatus::exited) ... ws.exit_code() ...
//   "the program " + ws.describe()        // "killed by signal 9 (Killed)"
//   return ws.shell_code();               // 3, or 128 + signal like a shell
#pragma once

#include <string>

namespace cape {

struct WaitStatus {
  enum Kind { exited, signaled, signal_stop, group_stop, event_stop, other };
  int raw = 0;
  Kind kind() const;
  int exit_code() const;  // exited
  int signal() const;     // signaled, signal_stop
  int event() const;      // PTRACE_EVENT_* of an event stop
  bool ok() const;        // exited with 0
  // The exit code, or 128 + signal (like a shell); 1 for anything else.
  int shell_code() const;
  // "exited with status 3", "killed by signal 9 (Killed)[, core dumped]", "stopped by
  // Stopped (signal)", "ptrace event 3", "ended with wait status N".
  std::string describe() const;
};

}  // namespace cape
