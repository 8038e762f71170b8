#include "injector/injector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "ckpt/ops.h"
#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::injector {
namespace {
std::string hex(uint64_t v) { return ckpt::hex_address(v); }
}  // namespace

void check_inside(const ckpt::Checkpoint& c, const std::vector<Range>& allowed,
                  const std::string& what) {
  std::vector<Range> merged;
  for (const Range& r : allowed) {
    if (!merged.empty() && merged.back().end == r.start)
      merged.back().end = r.end;
    else
      merged.push_back(r);
  }
  for (const ckpt::Run& run : c.runs) {
    auto it = std::upper_bound(merged.begin(), merged.end(), run.address,
                               [](uint64_t a, const Range& r) { return a < r.start; });
    bool ok = it != merged.begin() && run.address >= std::prev(it)->start && run.end() <= std::prev(it)->end;
    if (!ok)
      throw UserError(what + ": the run at " + hex(run.address) + " (" + std::to_string(run.length) +
                      " bytes) is outside the program's tracked writable memory; nothing was written");
  }
}

void write_checkpoint(pid_t pid, const ckpt::Checkpoint& c) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  util::ScopedFd mem(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!mem.valid()) throw UserError(errno_message("open " + path));
  std::vector<uint8_t> buf;
  for (const ckpt::Run& run : c.runs) {
    auto data = c.data(run);
    const uint8_t* src = data.data();
    if (run.reduction.active()) {
      buf.resize(run.length);
      if (::pread(mem.get(), buf.data(), buf.size(), static_cast<off_t>(run.address)) !=
          static_cast<ssize_t>(buf.size()))
        throw UserError(errno_message("read " + path + " at " + hex(run.address)));
      ckpt::reduce(run.reduction, buf, data);
      src = buf.data();
    }
    size_t done = 0;
    while (done < run.length) {
      ssize_t n = ::pwrite(mem.get(), src + done, run.length - done,
                           static_cast<off_t>(run.address + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw UserError(errno_message("write " + path + " at " + hex(run.address + done)));
      done += static_cast<size_t>(n);
    }
  }
}

}  // namespace cape::injector
