// Creating files where others may have planted something (a shared directory, /tmp): a name
// is replaced, never followed (issue 16, item 7).
#pragma once

#include <sys/types.h>

#include <string>

#include "util/scoped_fd.h"

namespace cape::util {

// Makes `dir` a directory if it does not exist (with `mode`); an existing directory (or a
// symlink to one: the path is the user's) is used as it is. Throws UserError naming `what`
// (e.g. "--output-dir") when the path exists and is not a directory, or cannot be made.
void ensure_directory(const std::string& dir, mode_t mode, const std::string& what);

// A new, empty file at `path`, open for writing and close-on-exec, with `mode`. Whatever
// `path` named before (an old file, a symlink planted there) is replaced by rename(2) of a
// fresh file made with O_EXCL: nothing it pointed to is opened or truncated. Throws
// UserError naming the path.
ScopedFd create_replacing(const std::string& path, mode_t mode);

}  // namespace cape::util
