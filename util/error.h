// User-facing errors: one exception type that main() prints cleanly ("cape: <message>")
// and turns into exit status 1 (or the status it carries). Bugs are asserts, not this.
#pragma once

#include <stdexcept>
#include <string>

namespace cape {

struct UserError : std::runtime_error {
  explicit UserError(const std::string& what, int exit_status = 1)
      : std::runtime_error(what), status(exit_status) {}
  int status;
};

// "<what>: <strerror(errno)>" for a failed system call.
std::string errno_message(const std::string& what);

}  // namespace cape
