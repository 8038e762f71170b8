#include "util/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

namespace cape::util {

void ensure_directory(const std::string& dir, mode_t mode, const std::string& what) {
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST)
    throw UserError(errno_message(what + ": cannot create the directory " + dir));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) throw UserError(errno_message(what + ": " + dir));
  if (!S_ISDIR(st.st_mode)) throw UserError(what + ": " + dir + " exists and is not a directory");
}

ScopedFd create_replacing(const std::string& path, mode_t mode) {
  std::string tmp = path + ".XXXXXX";
  ScopedFd fd(::mkostemp(tmp.data(), O_CLOEXEC));  // O_EXCL, mode 0600
  if (!fd.valid()) throw UserError(errno_message("cannot create " + path));
  if (::fchmod(fd.get(), mode) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_message("cannot create " + path);
    ::unlink(tmp.c_str());
    throw UserError(why);
  }
  return fd;
}

}  // namespace cape::util
