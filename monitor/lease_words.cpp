#include "monitor/lease_words.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "monitor/tick_signal.h"
#include "protocol.h"
#include "util/log.h"

namespace cape::monitor {

static_assert(CAPE_LEASE_SLOTS == 16, "LeaseWords::kSlots follows protocol.h");

namespace {
using Word = unsigned long;
constexpr Word kFree = CAPE_LEASE_FREE, kClosed = CAPE_LEASE_CLOSED, kOpen = CAPE_LEASE_OPEN,
               kInside = CAPE_LEASE_INSIDE, kWanted = CAPE_LEASE_WANTED, kRevoked = CAPE_LEASE_REVOKED;
bool inside(Word w) { return (w & 3) == kInside; }
Word load(const Word& w) { return __atomic_load_n(&w, __ATOMIC_ACQUIRE); }
bool cas(Word& w, Word& expected, Word to) {
  return __atomic_compare_exchange_n(&w, &expected, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
void store(Word& w, Word v) { __atomic_store_n(&w, v, __ATOMIC_RELEASE); }
}  // namespace

constexpr int kLeaseTickValue = 0x4c454153;  // "LEAS"

LeaseWords::~LeaseWords() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool is_lease_tick(const siginfo_t& si) { return is_tick(si, kLeaseTickValue); }

bool LeaseWords::tick() {
  std::lock_guard lk(mu_);
  if (pidfd_ < 0 || !send_tick(pidfd_, kLeaseTickValue)) return false;
  ticks_++;
  return true;
}

bool LeaseWords::map(const StoppedThread& st) {
  if (page_ || tried_) return page_ != nullptr;
  tried_ = true;
  std::string why;
  // (The memfd is named after libcape's copy tag, as the trackers' scratch is.)
  mem_ = Scratch::map(st, st.gadget + CAPE_COPY_TAG_OFFSET, CAPE_LEASE_PAGE_BYTES, true, &why, CAPE_LEASE_PAGE_ADDRESS);
  if (!mem_) {
    CAPE_LOG_AT(info, "critical") << "no trap-free re-entry of leased locks: " << why;
    return false;
  }
  page_ = reinterpret_cast<cape_lease_page*>(mem_->local());
  std::lock_guard lk(mu_);
  if (pidfd_ < 0) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, st.tracee.pid(), 0));
  if (pidfd_ < 0)  // (then a lease asked back waits for the program's next runtime call)
    CAPE_LOG_AT(info, "critical") << "pidfd_open: " << std::strerror(errno) << ": leases go back at the next runtime call";
  return true;
}

bool LeaseWords::close_all(int exiting) {
  if (!page_) return true;
  if (exiting >= 0 && exiting < kSlots) {  // its body is over: CLOSED, or REVOKED if asked back
    Word& w = page_->slots[exiting].state;
    for (Word s = load(w); inside(s) && !cas(w, s, (s & kRevoked) ? kRevoked : kClosed);) {
    }
  }
  bool ok = true;
  for (cape_lease_slot& slot : page_->slots) {
    Word s = load(slot.state);
    while (s == kOpen && !cas(slot.state, s, kClosed)) {
    }
    while (inside(s) && !(s & kWanted) && !cas(slot.state, s, s | kWanted)) {
    }
    if (inside(s)) {
      ok = false;
      waits_++;
    }
  }
  return ok;
}

void LeaseWords::reopen() {
  if (!page_) return;
  for (cape_lease_slot& slot : page_->slots) {
    Word s = kClosed;
    cas(slot.state, s, kOpen);
  }
}

// The slot the lock `name` had, else a free one; -1 when all are taken (mu_ held).
int LeaseWords::slot_for(const std::string& name) const {
  for (int i = 0; i < kSlots; i++)
    if (used_[i] && names_[i] == name) return i;
  for (int i = 0; i < kSlots; i++)
    if (!used_[i] && load(page_->slots[i].state) == kFree) return i;
  return -1;
}

int LeaseWords::assign(const std::string& name, uint64_t key, uint64_t addr, uint64_t run_stamp) {
  if (!page_) return -1;
  std::lock_guard lk(mu_);
  int at = slot_for(name);
  if (at < 0) return -1;
  cape_lease_slot& slot = page_->slots[at];
  Word s = load(slot.state);
  if (inside(s) || s == kOpen || slot.count != 0) return -1;  // (never: a call is being served)
  names_[at] = name;
  used_[at] = true;
  stamps_[at] = run_stamp;
  slot.key = key;
  slot.addr = addr;
  store(slot.state, kClosed);
  return at;
}

int LeaseWords::assign_inside(const std::string& name, uint64_t key, uint64_t addr, uint64_t run_stamp,
                              const std::vector<IntervalSet::Interval>& targets) {
  if (!page_ || targets.empty() || targets.size() > CAPE_LEASE_LOG) return -1;
  std::lock_guard lk(mu_);
  int at = slot_for(name);
  if (at < 0) return -1;
  cape_lease_slot& slot = page_->slots[at];
  Word s = load(slot.state);
  if (inside(s) || s == kOpen || slot.count != 0) return -1;
  names_[at] = name;
  used_[at] = true;
  stamps_[at] = run_stamp;
  slot.key = key;
  slot.addr = addr;
  uint64_t n = 0;
  for (auto [lo, hi] : targets) {
    slot.log[n].addr = lo;
    slot.log[n].size = hi - lo;
    n++;
  }
  slot.count = n;
  slot.entries++;
  store(slot.state, kInside);
  return at;
}

void LeaseWords::release(const std::string& name) {
  if (!page_) return;
  std::lock_guard lk(mu_);
  for (int i = 0; i < kSlots; i++)
    if (used_[i] && names_[i] == name && !inside(load(page_->slots[i].state)) && page_->slots[i].count == 0) {
      used_[i] = false;
      store(page_->slots[i].state, kFree);
    }
}

std::vector<std::string> LeaseWords::assigned() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (int i = 0; i < kSlots; i++)
    if (used_[i]) out.push_back(names_[i]);
  return out;
}

void LeaseWords::hold(const std::string& name) {
  std::lock_guard lk(mu_);
  for (int i = 0; i < kSlots; i++)
    if (used_[i] && names_[i] == name && !inside(load(page_->slots[i].state)) && page_->slots[i].count == 0)
      store(page_->slots[i].state, kClosed);
}

void LeaseWords::restamp(const std::string& name, uint64_t run_stamp) {
  std::lock_guard lk(mu_);
  for (int i = 0; i < kSlots; i++)
    if (used_[i] && names_[i] == name) stamps_[i] = run_stamp;
}

void LeaseWords::free_all() {
  if (!page_) return;
  std::lock_guard lk(mu_);
  for (int i = 0; i < kSlots; i++) {
    used_[i] = false;
    page_->slots[i].count = 0;
    store(page_->slots[i].state, kFree);
  }
}

void LeaseWords::forget() {
  std::lock_guard lk(mu_);
  // (The pidfd stays: execve keeps the process.)
  page_ = nullptr;
  mem_.reset();
  tried_ = false;
  for (bool& u : used_) u = false;
}

std::vector<LeaseWords::Logged> LeaseWords::logs() {
  std::vector<Logged> out;
  if (!page_) return out;
  std::lock_guard lk(mu_);
  for (int i = 0; i < kSlots; i++) {
    // (A slot asked back with nothing logged keeps its lock until the next window or entry.)
    cape_lease_slot& slot = page_->slots[i];
    uint64_t n = load(slot.count);
    if (!used_[i] || n == 0) continue;
    Logged l{i, names_[i], stamps_[i], {}};
    for (uint64_t k = 0; k < n && k < CAPE_LEASE_LOG; k++) {
      uint64_t a = slot.log[k].addr, z = slot.log[k].size;
      if (z == 0 || z > (uint64_t{1} << 30) || a + z < a) continue;  // (the program's memory: checked)
      l.targets.emplace_back(a, a + z);
    }
    out.push_back(std::move(l));
  }
  return out;
}

void LeaseWords::done(int slot, bool kept) {
  std::lock_guard lk(mu_);
  page_->slots[slot].count = 0;
  if (kept) return;
  used_[slot] = false;
  if (!inside(load(page_->slots[slot].state))) store(page_->slots[slot].state, kFree);
}

int LeaseWords::end(const std::string& name) {
  std::lock_guard lk(mu_);
  if (!page_) return 0;
  for (int i = 0; i < kSlots; i++) {
    if (!used_[i] || names_[i] != name) continue;
    cape_lease_slot& slot = page_->slots[i];
    Word s = load(slot.state);
    for (;;) {
      if (s == kFree) return 0;
      if (inside(s)) {
        if (cas(slot.state, s, s | kWanted | kRevoked)) return 3;
      } else if (cas(slot.state, s, kRevoked)) {
        return slot.count ? 2 : 1;
      }
    }
  }
  return 0;
}

uint64_t LeaseWords::taken() const {
  if (!page_) return 0;
  uint64_t n = 0;
  for (const cape_lease_slot& slot : page_->slots) n += slot.taken;
  return n;
}

uint64_t LeaseWords::entries() const {
  if (!page_) return 0;
  uint64_t n = 0;
  for (const cape_lease_slot& slot : page_->slots) n += slot.entries;
  return n;
}

}  // namespace cape::monitor
