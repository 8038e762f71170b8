#include "monitor/window.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "monitor/address_space.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

void Window::reset(std::unique_ptr<DirtyTracker> tracker) {
  tracker_ = std::move(tracker);
  open_ = false;
}

void Window::open(const StoppedThread& st, std::vector<Area> areas, std::vector<ckpt::MapChange> map_state) {
  at_start_ = std::move(areas);
  map_state_ = std::move(map_state);
  tracker_->start(st, at_start_);
  open_ = true;
  have_maps_ = false;
  ++region_;
  fresh_.clear();
  base_.clear();
  skipped_base_ = IntervalSet();
}

void Window::close(const StoppedThread& st) {
  if (!open_) return;
  tracker_->stop(st);
  open_ = false;
  have_maps_ = false;
  fresh_.clear();
  at_start_.clear();
  map_state_.clear();
}

namespace {
// /proc/PID/statm's "size" (total pages) and "data" (data + stack pages); false when unread.
// The file stays open (read again from offset 0, which makes the kernel format it anew for
// the process's current memory, also after an execve): the open cost as much as the read.
bool statm(pid_t pid, uint64_t& size, uint64_t& data) {
  static thread_local util::ScopedFd fd;
  static thread_local pid_t fd_pid = 0;
  if (fd_pid != pid || !fd.valid()) {
    std::string path = "/proc/" + std::to_string(pid) + "/statm";
    fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    fd_pid = pid;
  }
  char buf[256];
  ssize_t n = fd.valid() ? ::pread(fd.get(), buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) {
    fd.reset();  // that process is gone: a new one with its pid opens it again
    return false;
  }
  buf[n] = 0;
  unsigned long long v[6];
  if (std::sscanf(buf, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) return false;
  size = v[0];
  data = v[5];
  return true;
}
}  // namespace

const std::vector<Mapping>& Window::maps_for_create(pid_t pid, bool may_reuse) {
  if (maps_signal_vouches(pid)) {
    // The maps cache is as good as statm's hint, and needs no read (memory_map.h); copied only
    // when it was read again since (its stamp; issue 14: a copy per create()).
    uint64_t stamp = 0;
    const std::vector<Mapping>* cached = AddressSpace::keeps_tracked() ? cached_maps(pid, &stamp) : nullptr;
    if (!cached) {
      maps_ = read_maps(pid);
      maps_stamp_ = 0;
    } else if (stamp != maps_stamp_) {
      maps_ = *cached;
      maps_stamp_ = stamp;
    }
    have_maps_ = false;
    return maps_;
  }
  uint64_t size = 0, data = 0;
  bool known = statm(pid, size, data);
  TrackerKind k = tracker_->kind();
  bool same = known && have_maps_ && size == maps_size_ && data == maps_data_;
  if (may_reuse && same && k != TrackerKind::mprotect && k != TrackerKind::inproc) return maps_;
  maps_ = read_maps(pid);
  maps_stamp_ = 0;
  have_maps_ = known;
  maps_size_ = size;
  maps_data_ = data;
  return maps_;
}

void Window::read_base(const Tracee& t, uint64_t address, std::span<uint8_t> out) const {
  size_t done = 0;
  while (done < out.size()) {
    uint64_t a = address + done, page = page_down(a);
    size_t n = std::min<uint64_t>(out.size() - done, page + kPageSize - a);
    std::span<uint8_t> part = out.subspan(done, n);
    auto it = base_.find(page);
    if (it != base_.end() && it->second.size() == kPageSize) {
      std::memcpy(part.data(), it->second.data() + (a - page), n);
    } else if (skipped_base_.contains(page)) {  // the tracker has it (create(): CreateSide::undiffed)
      std::vector<uint8_t> whole(kPageSize);
      if (!tracker_->original(page, whole))
        throw std::logic_error("the base of page " + ckpt::hex_address(page) + " (not diffed by create()) is lost");
      std::memcpy(part.data(), whole.data() + (a - page), n);
    } else if (t.read_bytes_fallible(a, part) != n)
      std::fill(part.begin(), part.end(), uint8_t{0});
    done += n;
  }
}

}  // namespace cape::monitor
