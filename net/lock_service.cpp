#include "net/lock_service.h"

#include <algorithm>
#include <stdexcept>

#include "ckpt/overlay.h"

namespace cape::net {

void LockService::new_region(uint64_t region) {
  // Locks held or asked for stay (a node cannot be in an older region now, but a lock
  // keeps its line); the writes of the older region reached every node at its end.
  for (auto& [name, l] : locks_) {
    if (l.leased) {  // an older region's lease (its holder is outside any body now)
      l.holder = -1;
      l.leased = l.revoking = false;
    }
    l.log = ckpt::Checkpoint{};
    l.revokes = 0;
    l.quiet = 0;
    l.released_at.clear();
    l.next_ticket = 0;
  }
  region_ = region;
  stamp_ = 0;
  for (auto& [name, r] : renewals_)
    if (r.second == region) {  // never asked for since: nobody holds or waits for it
      Lock& l = locks_[name];
      l.holder = r.first;
      l.holder_ticket = -1;
      l.leased = true;
      l.revoking = false;
      stamp_ = 1;  // the renewed leases' stamp
    }
  renewals_.clear();
}

void LockService::catch_up(const std::string& name, int rank) {
  auto r = renewals_.find(name);
  if (r != renewals_.end() && r->second.first == rank && r->second.second > region_) new_region(r->second.second);
}

bool LockService::release_renew(const std::string& name, int rank, const ckpt::Checkpoint& writes, uint64_t next,
                                int* next_holder, uint64_t* token) {
  catch_up(name, rank);
  auto it = locks_.find(name);
  const bool keep = it != locks_.end() && it->second.holder == rank && it->second.leased && !it->second.revoking &&
                    it->second.waiting.empty() && it->second.holder_ticket < 0 && next == region_ + 1;
  if (it != locks_.end()) *token = it->second.asked;
  *next_holder = release(name, rank, writes);
  return keep;
}

bool LockService::confirm_renewal(const std::string& name, int rank, uint64_t next, uint64_t token) {
  Lock& l = locks_[name];
  if (l.asked == token && next == region_ + 1 && !renewals_.count(name)) {
    renewals_[name] = {rank, next};
    return true;
  }
  cancelled_.insert({name, rank});
  return false;
}

bool LockService::request(const std::string& name, int rank, uint64_t region, bool wait, int64_t ticket, bool lease,
                          int* revoke) {
  if (revoke) *revoke = -1;
  if (region > region_) new_region(region);
  Lock& l = locks_[name];
  l.asked++;
  if (auto r = renewals_.find(name); r != renewals_.end() && r->second.second > region_) {
    // Kept into the next window by a node that left this one, but others still want it here.
    cancelled_.insert({name, r->second.first});
    if (revoke) *revoke = r->second.first;
    renewals_.erase(r);
  }
  if (l.holder == rank ||
      std::find_if(l.waiting.begin(), l.waiting.end(), [&](const Waiter& w) { return w.rank == rank; }) != l.waiting.end())
    throw std::logic_error("node " + std::to_string(rank) + " asks for lock '" + name +
                           "', which it holds or waits for already (a critical section or lock that is not "
                           "nestable, entered again by the thread inside it: it would wait for itself forever)");
  if (ticket >= 0 && ticket < l.next_ticket)
    throw std::logic_error("node " + std::to_string(rank) + " asks for '" + name + "' with ticket " +
                           std::to_string(ticket) + ", which has passed (an ordered loop's iteration entering its "
                           "ordered block twice?)");
  if (l.holder < 0 && (ticket < 0 || ticket == l.next_ticket)) {
    l.holder = rank;
    l.holder_ticket = ticket;
    l.leased = lease && ticket < 0 && l.revokes < kLeaseRevokes;
    l.revoking = false;
    return true;
  }
  if (wait) l.waiting.push_back({rank, ticket, lease && ticket < 0});
  // A leased lock goes back when asked (omp_test_lock's too: else a node testing in a loop
  // would never get a lock its last holder keeps).
  if (l.leased && !l.revoking) {
    l.revoking = true;
    l.revokes++;
    if (revoke) *revoke = l.holder;
  }
  return false;
}

int LockService::next_holder(Lock& l) {
  l.holder = -1;
  l.leased = l.revoking = false;
  auto next = l.waiting.begin();
  if (l.holder_ticket >= 0) {  // ordered: the next ticket, when it has asked
    l.next_ticket = l.holder_ticket + 1;
    next = std::find_if(l.waiting.begin(), l.waiting.end(), [&](const Waiter& w) { return w.ticket == l.next_ticket; });
  }
  l.holder_ticket = -1;
  if (next == l.waiting.end()) return -1;
  l.holder = next->rank;
  l.holder_ticket = next->ticket;
  l.waiting.erase(next);
  // Not a lease when others wait: its holder would keep it at its exit, and nobody would
  // ask it back (a revoke goes out when a request finds a lease, not for those in line).
  l.leased = next->lease && l.waiting.empty() && l.revokes < kLeaseRevokes;
  return l.holder;
}

int LockService::release(const std::string& name, int rank, const ckpt::Checkpoint& writes) {
  catch_up(name, rank);
  auto it = locks_.find(name);
  if (cancelled_.erase({name, rank}) && (it == locks_.end() || it->second.holder != rank))
    return -1;  // a cancelled renewal given back (request())
  if (it == locks_.end() || it->second.holder != rank)
    throw std::logic_error("node " + std::to_string(rank) + " releases lock '" + name + "', which it does not hold");
  Lock& l = it->second;
  if (!writes.runs.empty()) l.log = ckpt::overlay(l.log, writes);
  l.released_at[rank] = writes.timestamp;
  const int next = next_holder(l);
  if (next >= 0)
    l.quiet = 0;
  else if (++l.quiet >= kQuietReleases)
    l.revokes = 0;  // nobody else wants it any more: leases again
  return next;
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

bool LockService::leased_by(const std::string& name, int rank) const {
  auto it = locks_.find(name);
  return it != locks_.end() && it->second.holder == rank && it->second.leased;
}

std::optional<std::string> LockService::awaited_from(int rank) const {
  for (const auto& [name, l] : locks_)
    if (l.holder == rank && (!l.waiting.empty() || l.revoking)) return name;
  return std::nullopt;
}

bool LockService::asked_back(const std::string& name) const {
  auto it = locks_.find(name);
  return it != locks_.end() && it->second.revoking;
}

}  // namespace cape::net
