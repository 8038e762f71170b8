#include "monitor/tracee.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "monitor/memory_map.h"
#include "util/error.h"

namespace cape::monitor {

Tracee::Tracee(pid_t pid) : pid_(pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/mem";
  mem_.reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!mem_.valid()) fail_errno("open " + path);
}

bool Tracee::one_thread() const {
  if (traced_threads_ == 1) return true;
  struct stat st {};
  return ::stat(("/proc/" + std::to_string(pid_) + "/task").c_str(), &st) == 0 && st.st_nlink == 3;
}

int Tracee::pagemap_fd() const {
  if (!pagemap_tried_) {
    pagemap_tried_ = true;
    pagemap_.reset(::open(("/proc/" + std::to_string(pid_) + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC));
  }
  return pagemap_.get();
}

size_t Tracee::read_bytes_fallible(uint64_t remote, std::span<uint8_t> out) const {
  size_t done = 0;
  while (done < out.size()) {
    iovec local{out.data() + done, out.size() - done};
    iovec rem{reinterpret_cast<void*>(remote + done), out.size() - done};
    ssize_t n = ::process_vm_readv(pid_, &local, 1, &rem, 1, 0);
    if (n <= 0) {
      // process_vm_readv stops at the first unreadable page; /proc/PID/mem also reads
      // pages the tracee cannot (PROT_NONE guard pages never hold program data, so stop).
      break;
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

void Tracee::read_bytes(uint64_t remote, std::span<uint8_t> out) const {
  size_t n = read_bytes_fallible(remote, out);
  if (n != out.size()) {
    errno = errno ? errno : EFAULT;
    fail_errno("read tracee memory at 0x" + [&] {
      char b[32];
      snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(remote + n));
      return std::string(b);
    }());
  }
}

void Tracee::write_bytes(uint64_t remote, std::span<const uint8_t> data) const {
  if (!data.empty()) {
    if (written_.ranges.size() < 64)
      written_.ranges.emplace_back(page_down(remote), page_up(remote + data.size()));
    else
      written_.overflow = true;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(mem_.get(), data.data() + done, data.size() - done,
                         static_cast<off_t>(remote + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_errno("write tracee memory");
    done += static_cast<size_t>(n);
  }
}

std::string Tracee::read_constant_string(uint64_t remote) const {
  MapsEpoch e = maps_epoch(pid_);
  if (!e.known()) return read_c_string(remote);
  for (const ConstantString& c : strings_)
    if (c.at == remote && MapsEpoch{c.epoch_signal, c.epoch_monitor} == e) return c.text;
  std::string s = read_c_string(remote);
  // Kept only when read-only now; the same epoch later means no mapping changed since.
  for (const Mapping& m : read_maps(pid_))
    if (m.start <= remote && remote < m.end) {
      if (!m.write && remote + s.size() + 1 <= m.end)
        strings_[next_string_++ % strings_.size()] = {remote, e.signal, e.monitor, s};
      break;
    }
  return s;
}

std::string Tracee::read_c_string(uint64_t remote, size_t max) const {
  std::string s;
  char buf[256];
  while (s.size() < max) {
    errno = 0;
    size_t n = read_bytes_fallible(remote + s.size(), {reinterpret_cast<uint8_t*>(buf), sizeof buf});
    // The program died meanwhile (SIGKILL while the monitor waited in a receive): ESRCH,
    // which the supervisor turns into the program's own end, not a bad pointer.
    if (n == 0 && errno == ESRCH) fail_errno("read a runtime call's string");
    if (n == 0) throw UserError("cape: bad string pointer passed to a runtime call");
    for (size_t i = 0; i < n; i++) {
      if (buf[i] == 0) return s;
      s.push_back(buf[i]);
    }
  }
  throw UserError("cape: checkpoint name longer than " + std::to_string(max) + " bytes");
}

user_regs_struct Tracee::get_regs(pid_t tid) {
  user_regs_struct r;
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0) fail_errno("PTRACE_GETREGS");
  return r;
}
void Tracee::set_regs(pid_t tid, const user_regs_struct& r) {
  if (::ptrace(PTRACE_SETREGS, tid, nullptr, &r) != 0) fail_errno("PTRACE_SETREGS");
}

}  // namespace cape::monitor
