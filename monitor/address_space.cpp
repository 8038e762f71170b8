#include "monitor/address_space.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <span>

#include "util/error.h"

namespace cape::monitor {

void AddressSpace::reset(pid_t pid) {
  pid_ = pid;
  exe_.clear();
  load_base_ = 0;
  forget_kept();
}

void AddressSpace::at_runtime_call(const Tracee& t, pid_t tid, uint64_t fs_base) {
  if (tid == pid_ && tls_ != fs_base) {
    tls_ = fs_base;
    find_tls_low(t);
  }
  if (exe_.empty()) {
    char buf[4096];
    std::string link = "/proc/" + std::to_string(pid_) + "/exe";
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    if (n < 0) fail_errno("readlink " + link);
    exe_.assign(buf, static_cast<size_t>(n));
    forget_kept();  // (the executable's areas are data and bss now)
  }
}

// x86_64 glibc: fs_base points at the TCB, whose second word is the DTV; dtv[-1] holds its
// length, dtv[i] (16 bytes each) the address of module i's TLS block. The static blocks lie
// just below fs_base; the lowest one in use bounds what the kernel-touched TLS pages hold.
void AddressSpace::find_tls_low(const Tracee& t) {
  tls_low_ = 0;
  auto word = [&](uint64_t a, uint64_t& v) {
    std::span<uint8_t> b(reinterpret_cast<uint8_t*>(&v), 8);
    return t.read_bytes_fallible(a, b) == 8;
  };
  uint64_t dtv = 0, len = 0;
  if (!word(tls_ + 8, dtv) || dtv < 16 || !word(dtv - 16, len)) return;
  uint64_t low = tls_;
  for (uint64_t i = 1; i <= std::min<uint64_t>(len, 256); i++) {
    uint64_t block = 0;
    if (!word(dtv + 16 * i, block)) return;
    if (block != 0 && block != ~uint64_t{0} && block < tls_ && tls_ - block < (uint64_t{1} << 20))
      low = std::min(low, block);
  }
  if (low < tls_) tls_low_ = low;
}

void AddressSpace::forget_kept() {
  std::lock_guard lk(kept_mu_);
  for (Kept& k : kept_) k = Kept{};
}

bool AddressSpace::keeps_tracked() {
  static const bool keep = !(std::getenv("CAPE_TRACKED_KEPT") && std::string(std::getenv("CAPE_TRACKED_KEPT")) == "0");
  return keep;
}

std::vector<Area> AddressSpace::tracked(uint64_t stack_boundary) const {
  uint64_t stamp = 0;
  const std::vector<Mapping>* maps = keeps_tracked() ? cached_maps(pid_, &stamp) : nullptr;
  if (!maps) {
    std::lock_guard lk(kept_mu_);
    ++asks_;
    ++computed_;
    return tracked(read_maps(pid_), stack_boundary);
  }
  return tracked(*maps, stack_boundary, stamp);
}

std::vector<Area> AddressSpace::tracked(const std::vector<Mapping>& maps, uint64_t stack_boundary,
                                        uint64_t stamp) const {
  std::lock_guard lk(kept_mu_);
  ++asks_;
  ++computed_;
  if (stamp == 0 || !keeps_tracked()) return tracked(maps, stack_boundary);
  for (const Kept& k : kept_)
    if (k.stamp == stamp && k.boundary == stack_boundary && k.tls == tls_ && k.tls_low == tls_low_) {
      --computed_;
      return k.areas;
    }
  Kept& k = kept_[kept_next_++ % kept_.size()];
  k = {stamp, stack_boundary, tls_, tls_low_, tracked(maps, stack_boundary)};
  return k.areas;
}

std::vector<Area> AddressSpace::tracked(const std::vector<Mapping>& maps, uint64_t stack_boundary) const {
  return tracked_set(maps, exe_, stack_boundary, tls_, tls_low_);
}

uint64_t AddressSpace::load_base() const {
  if (load_base_ == 0 && !exe_.empty()) load_base_ = monitor::load_base(read_maps(pid_), exe_);
  return load_base_;
}

}  // namespace cape::monitor
