#include "injector/injector.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>
#include <utility>

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

namespace {

// A run as one transfer sees it: where it is in the program and its bytes here.
template <typename Byte>
using Pieces = std::vector<std::pair<uint64_t, std::span<Byte>>>;

// Moves `pieces` IOV_MAX at a time with `vm` (process_vm_readv or process_vm_writev); what it
// could not move (a page the program made read-only: EFAULT) goes through /proc/PID/mem with
// `one`, from the first piece not moved whole (moving a piece again is harmless: the program
// is stopped).
template <typename Byte, typename Vm, typename One>
void move_pieces(const Pieces<Byte>& pieces, Vm vm, One one) {
  constexpr size_t kIov = 1024;
  std::vector<iovec> local, remote;
  for (size_t i = 0; i < pieces.size();) {
    size_t j = std::min(pieces.size(), i + kIov);
    local.clear();
    remote.clear();
    size_t want = 0;
    for (size_t k = i; k < j; k++) {
      local.push_back({const_cast<uint8_t*>(pieces[k].second.data()), pieces[k].second.size()});
      remote.push_back({reinterpret_cast<void*>(pieces[k].first), pieces[k].second.size()});
      want += pieces[k].second.size();
    }
    ssize_t got = vm(local.data(), local.size(), remote.data(), remote.size());
    if (got != static_cast<ssize_t>(want)) {
      size_t done = got > 0 ? static_cast<size_t>(got) : 0, k = i;
      for (; k < j && done >= pieces[k].second.size(); k++) done -= pieces[k].second.size();
      for (; k < j; k++) one(pieces[k].first, pieces[k].second);
    }
    i = j;
  }
}

void write_pieces(pid_t pid, int mem, const std::string& path, const Pieces<const uint8_t>& pieces) {
  move_pieces(
      pieces,
      [pid](const iovec* l, size_t nl, const iovec* r, size_t nr) { return ::process_vm_writev(pid, l, nl, r, nr, 0); },
      [&](uint64_t address, std::span<const uint8_t> bytes) { write_at(mem, path, address, bytes); });
}

void read_pieces(pid_t pid, int mem, const std::string& path, const Pieces<uint8_t>& pieces) {
  move_pieces(
      pieces,
      [pid](const iovec* l, size_t nl, const iovec* r, size_t nr) { return ::process_vm_readv(pid, l, nl, r, nr, 0); },
      [&](uint64_t address, std::span<uint8_t> bytes) { read_at(mem, path, address, bytes); });
}

}  // namespace

// Runs in batches: the spans that need memory's bytes first (masked runs: their words in
// between; reductions: the earlier value) are read with one process_vm_readv per 1024, patched
// here, then every run of the batch is written with one process_vm_writev per 1024 (issue 14:
// a Jacobi sweep's merged result, ~7,800 page-sized masked runs, took 15,600 calls on
// /proc/PID/mem, 31-39 ms for 31 MB).
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
  constexpr uint64_t kBatchBytes = 8 << 20;  // of read-modify-write spans per batch
  std::vector<uint8_t> buf;
  Pieces<uint8_t> reads;
  Pieces<const uint8_t> writes;
  for (size_t i = 0; i < c.runs.size();) {
    // A batch: runs until kBatchBytes of them need reading first (at least one run).
    size_t j = i;
    uint64_t rmw = 0;
    while (j < c.runs.size()) {
      const ckpt::Run& r = c.runs[j];
      uint64_t need = r.masked() || r.reduction.active() ? r.length : 0;
      if (j > i && rmw + need > kBatchBytes) break;
      rmw += need;
      j++;
    }
    if (buf.size() < rmw) buf.resize(rmw);
    reads.clear();
    writes.clear();
    uint64_t off = 0;
    for (size_t k = i; k < j; k++) {
      const ckpt::Run& r = c.runs[k];
      if (!r.masked() && !r.reduction.active()) continue;
      reads.emplace_back(r.address, std::span<uint8_t>(buf.data() + off, r.length));
      off += r.length;
    }
    read_pieces(pid, mem_fd, path, reads);
    size_t next_read = 0;
    for (size_t k = i; k < j; k++) {
      const ckpt::Run& r = c.runs[k];
      if (!r.masked() && !r.reduction.active()) {
        writes.emplace_back(r.address, c.data(r));
        continue;
      }
      std::span<uint8_t> span = reads[next_read++].second;
      if (r.masked()) {
        // The span as read, its changed words patched in (the program is stopped, so the
        // words in between stay as read). Words memory holds already are not written again:
        // a node's own part of a merged result (a third of it on 3 nodes), whose write into
        // write-protected pages is the inject's main cost.
        bool same = true;
        c.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) {
          uint8_t* at = span.data() + (address - r.address);
          if (same && std::memcmp(at, piece.data(), piece.size()) != 0) same = false;
          std::memcpy(at, piece.data(), piece.size());
        });
        if (same) continue;
      } else {
        ckpt::reduce(r.reduction, span, c.data(r));
      }
      writes.emplace_back(r.address, span);
    }
    write_pieces(pid, mem_fd, path, writes);
    i = j;
  }
}

}  // namespace cape::injector
