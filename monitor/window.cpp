#include "monitor/window.h"

#include <algorithm>
#include <cstring>

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
  ++region_;
  fresh_.clear();
  base_.clear();
}

void Window::close(const StoppedThread& st) {
  if (!open_) return;
  tracker_->stop(st);
  open_ = false;
  fresh_.clear();
  at_start_.clear();
  map_state_.clear();
}

void Window::read_base(const Tracee& t, uint64_t address, std::span<uint8_t> out) const {
  size_t done = 0;
  while (done < out.size()) {
    uint64_t a = address + done, page = page_down(a);
    size_t n = std::min<uint64_t>(out.size() - done, page + kPageSize - a);
    std::span<uint8_t> part = out.subspan(done, n);
    auto it = base_.find(page);
    if (it != base_.end() && it->second.size() == kPageSize)
      std::memcpy(part.data(), it->second.data() + (a - page), n);
    else if (t.read_bytes_fallible(a, part) != n)
      std::fill(part.begin(), part.end(), uint8_t{0});
    done += n;
  }
}

}  // namespace cape::monitor
