// The errors of the monitor, net/ and cli/ (docs/errors.md says which is for what):
//
//   UserError    what the person running cape can act on: a bad option or file, a runtime
//                call the program misused, a job that failed (the message names the node).
//                main() and run_monitor() print "cape: <message>" and exit with `status`.
//   SystemError  a system call that must not fail did (fail_errno): a bug or a broken
//                machine, not the user's doing; printed as "cape: monitor error: ...".
//
// Beside them: ckpt::Error (ckpt/ uses nothing of cape's, so it has its own; callers that
// know the context say it, e.g. "--load NAME=FILE: ..."), monitor::TraceeDied (the program
// died under a remote syscall), expected conditions as return values (net's IoResult, a
// feature the machine lacks as nullptr plus why), and asserts for broken invariants.
#pragma once

#include <stdexcept>
#include <string>

namespace cape {

struct UserError : std::runtime_error {
  explicit UserError(const std::string& what, int exit_status = 1)
      : std::runtime_error(what), status(exit_status) {}
  int status;
};

struct SystemError : std::runtime_error {
  SystemError(const std::string& what, int error) : std::runtime_error(what), error(error) {}
  int error;  // the errno
};

// "<what>: <strerror(errno)>" for a failed system call.
std::string errno_message(const std::string& what);

// Throws SystemError(errno_message(what), errno).
[[noreturn]] void fail_errno(const std::string& what);

}  // namespace cape
