#include "util/error.h"

#include <cerrno>
#include <cstring>

namespace cape {

std::string errno_message(const std::string& what) {
  int e = errno;
  return what + ": " + std::strerror(e);
}

}  // namespace cape
