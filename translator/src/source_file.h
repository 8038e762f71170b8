// Reading a C source file for cape-translate and cape-cc: only a regular file (issue 16,
// item 8: a FIFO blocked open(), a directory gave empty output and status 0).
#pragma once

#include <string>

namespace cape::tr {

// Reads the C file `path` into `text`. False, with `why`, for what is not a regular file (a
// directory, or a FIFO, which would block open(): opened non-blocking and refused) or what
// cannot be read.
bool read_source(const std::string& path, std::string& text, std::string& why);

}  // namespace cape::tr
