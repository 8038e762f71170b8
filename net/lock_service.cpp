#include "net/lock_service.h"

#include <algorithm>
#include <stdexcept>

#include "ckpt/overlay.h"

namespace cape::net {

void LockService::new_region(uint64_t region) {
  // Locks held or asked for stay (a node cannot be in an older region now, but a lock
  // keeps its line); the writes of the older region reached every node at its end.
  for (auto& [name, l] : locks_) {
    l.log = ckpt::Checkpoint{};
    l.released_at.clear();
  }
  region_ = region;
  stamp_ = 0;
}

bool LockService::request(const std::string& name, int rank, uint64_t region, bool wait) {
  if (region > region_) new_region(region);
  Lock& l = locks_[name];
  if (l.holder == rank || std::find(l.waiting.begin(), l.waiting.end(), rank) != l.waiting.end())
    throw std::logic_error("node " + std::to_string(rank) + " asks for lock '" + name +
                           "', which it holds or waits for already (a critical section or lock that is not "
                           "nestable, entered again by the thread inside it: it would wait for itself forever)");
  if (l.holder < 0) {
    l.holder = rank;
    return true;
  }
  if (wait) l.waiting.push_back(rank);
  return false;
}

int LockService::release(const std::string& name, int rank, const ckpt::Checkpoint& writes) {
  auto it = locks_.find(name);
  if (it == locks_.end() || it->second.holder != rank)
    throw std::logic_error("node " + std::to_string(rank) + " releases lock '" + name + "', which it does not hold");
  Lock& l = it->second;
  if (!writes.runs.empty()) l.log = ckpt::overlay(l.log, writes);
  l.released_at[rank] = writes.timestamp;
  l.holder = -1;
  if (l.waiting.empty()) return -1;
  l.holder = l.waiting.front();
  l.waiting.pop_front();
  return l.holder;
}

ckpt::Checkpoint LockService::grant(const std::string& name, int rank) {
  auto it = locks_.find(name);
  if (it == locks_.end() || it->second.holder != rank)
    throw std::logic_error("grant of lock '" + name + "' to node " + std::to_string(rank) + ", which does not hold it");
  if (stamp_ >= kMaxStamp)
    throw std::logic_error("more than " + std::to_string(kMaxStamp) +
                           " critical sections or lock acquisitions in one parallel region: their order no longer "
                           "fits the checkpoints' timestamps (split the region)");
  Lock& l = it->second;
  auto seen = l.released_at.find(rank);
  ckpt::Checkpoint g = seen == l.released_at.end() ? l.log : ckpt::newer_than(l.log, seen->second);
  g.timestamp = ++stamp_;
  g.name = name;
  return g;
}

bool LockService::held_by(const std::string& name, int rank) const {
  auto it = locks_.find(name);
  return it != locks_.end() && it->second.holder == rank;
}

}  // namespace cape::net
