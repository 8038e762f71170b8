#include "injector/injector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

namespace {

void read_at(int fd, const std::string& path, uint64_t address, std::span<uint8_t> out) {
  if (::pread(fd, out.data(), out.size(), static_cast<off_t>(address)) != static_cast<ssize_t>(out.size()))
    throw UserError(errno_message("read " + path + " at " + hex(address)));
}

void write_at(int fd, const std::string& path, uint64_t address, std::span<const uint8_t> in) {
  size_t done = 0;
  while (done < in.size()) {
    ssize_t n = ::pwrite(fd, in.data() + done, in.size() - done, static_cast<off_t>(address + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw UserError(errno_message("write " + path + " at " + hex(address + done)));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void write_checkpoint(pid_t pid, const ckpt::Checkpoint& c) {
  if (c.runs.empty()) return;
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  util::ScopedFd mem(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!mem.valid()) throw UserError(errno_message("open " + path));
  write_checkpoint(pid, mem.get(), c);
}

void write_checkpoint(pid_t pid, int mem_fd, const ckpt::Checkpoint& c) {
  if (c.runs.empty()) return;
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  std::vector<uint8_t> buf;
  for (const ckpt::Run& run : c.runs) {
    if (run.masked()) {
      // The span read, its changed words patched in, written back whole: two calls instead
      // of one per piece (the program is stopped, so the words in between stay as read).
      buf.resize(run.length);
      read_at(mem_fd, path, run.address, buf);
      c.for_each_piece(run, [&](uint64_t address, std::span<const uint8_t> piece) {
        std::memcpy(buf.data() + (address - run.address), piece.data(), piece.size());
      });
      write_at(mem_fd, path, run.address, buf);
      continue;
    }
    auto data = c.data(run);
    if (run.reduction.active()) {
      buf.resize(run.length);
      read_at(mem_fd, path, run.address, buf);
      ckpt::reduce(run.reduction, buf, data);
      data = buf;
    }
    write_at(mem_fd, path, run.address, data);
  }
}

}  // namespace cape::injector
