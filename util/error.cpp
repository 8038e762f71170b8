#include "util/error.h"

#include <cerrno>
#include <cstring>

namespace cape {

std::string errno_message(const std::string& what) {
  int e = errno;
  return what + ": " + std::strerror(e);
}

void fail_errno(const std::string& what) {
  int e = errno;
  throw SystemError(errno_message(what), e);
}

}  // namespace cape
