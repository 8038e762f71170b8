// The master's lock service: `critical [(name)]`, atomics that cannot be reductions, the
// omp_*_lock API and `ordered`, across nodes (docs/critical.md). Beyond the CAPE papers.
//
// One lock per name, granted in the order asked. The service keeps, for the current
// region, the writes made under each lock (the holders' releases laid over each other,
// every run stamped with the acquisition that wrote it), so that a grant carries exactly
// what other holders wrote since the new holder last held the lock. Stamps count the
// region's acquisitions, of every lock, from 1: the node composes them into run timestamps
// above the region's own (monitor/critical.h), so the end-of-region merge keeps the last
// holder's value (002_2c61c2cb27f62a9a.txt Def. 4.2: the later timestamp wins).
//
// Pure bookkeeping, no threads and no sockets: the Node calls it under its mutex
// (net/node_locks.cpp) for the slaves' frames and for the master's own program.
//
//   LockService s;
//   if (s.request("sum", 2, region)) grant = s.grant("sum", 2);   // else: in line
//   int next = s.release("sum", 2, writes);                        // next holder, or -1
//   if (next >= 0) grant_to(next, s.grant("sum", next));
//
// Leases (docs/critical.md, "Lock leases"): a slave may ask for a lease. Its grant is then
// kept by the node after its exits (no frame: the node keeps the bodies' writes) until
// another node asks: request() then says which holder to ask back (once per lease), and the
// lock moves on at that holder's release (sent at once when it is outside a body, at the
// body's exit otherwise), which carries every write made under the lease. Re-entries under
// one lease share its stamp: nobody else held the lock between them, so they are one run
// of the serial order. A new region ends every lease (the nodes give them back before their
// parts), but for renewals: a holder that used its lease in a window and was never asked for
// it may keep it into the next window (release_renew), with stamp 1 there (every other
// acquisition of that window comes later: stamps start at 2 when a lease was renewed).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::net {

class LockService {
 public:
  // Stamps of one region go from 1 to this (the node keeps 20 bits of order: monitor's
  // kRegionShift); more acquisitions in one region fail the job with a message.
  static constexpr uint64_t kMaxStamp = (uint64_t{1} << 20) - 2;
  // A lock asked back this many times in a region is contended: its later grants in the
  // region are plain (a lease asked back outside its body costs the next holder one more
  // exchange with the old one; contended entries got ~25% slower with leases throughout).
  static constexpr int kLeaseRevokes = 2;
  // ... until it is released this many times in a row with nobody in line: the contention is
  // over (the others have left the loop), and the lone user left gets leases again (session
  // 11: bench-critical's contended line, the last node's entries all plain after the others
  // had finished: 90 us each instead of a trap-free re-entry's 2).
  static constexpr int kQuietReleases = 4;

  // `rank` asks for `name` in region `region` (the asker's window number, the same on every
  // node). A newer region than the service has seen starts afresh: every node has merged
  // the older one's writes. True when `rank` holds the lock now; else it waits in line.
  // Throws std::logic_error when `rank` holds or waits for it already (a program error:
  // OpenMP's critical is not recursive).
  // `wait` false (omp_test_lock): a busy lock leaves `rank` out of the line, and false says so.
  // `ticket` >= 0 (`ordered`): the lock goes to tickets 0, 1, 2, ... of the region in that
  // order, whoever asks first (the logical iteration numbers of an ordered loop).
  // `lease` (never with a ticket): the grant is a lease (above). `revoke`, when given, is set
  // to the lease holder to ask for the lock back (the caller sends the frame), else -1; also
  // when the request succeeds (a renewal for the next window cancelled: release_renew).
  bool request(const std::string& name, int rank, uint64_t region, bool wait = true, int64_t ticket = -1,
               bool lease = false, int* revoke = nullptr);
  // The holder leaves `name` with the writes it made holding it (runs stamped by the node;
  // the header's timestamp is the stamp of its acquisition). Returns the rank that holds the
  // lock now, or -1. Throws std::logic_error when `rank` does not hold it.
  int release(const std::string& name, int rank, const ckpt::Checkpoint& writes);
  // The same, the holder asking to keep its lease into window `next` (its next window). True
  // when it may (it holds a lease nobody waits for nor asked back): the caller tells it so
  // (a grant), then confirm_renewal() with `token`, and from new_region(next) the lock is its
  // own again, stamp 1. Else a plain release (`next_holder` as release()'s).
  bool release_renew(const std::string& name, int rank, const ckpt::Checkpoint& writes, uint64_t next,
                     int* next_holder, uint64_t* token);
  // False when the lock was asked for since (its answer was on its way): the renewal is
  // cancelled, the caller asks the holder for it back (a revoke, after the grant), and that
  // release only ends the cancellation.
  bool confirm_renewal(const std::string& name, int rank, uint64_t next, uint64_t token);
  // For the rank that holds `name` now, once per acquisition: the grant. Its header
  // timestamp is the acquisition's stamp (1, 2, ... in the region); its runs are the writes
  // other holders made under the lock since `rank` last released it. Throws
  // std::logic_error when the region has run out of stamps.
  ckpt::Checkpoint grant(const std::string& name, int rank);
  bool held_by(const std::string& name, int rank) const;
  // The holder holds it as a lease (its grant says so: only when nobody else waits for it).
  bool leased_by(const std::string& name, int rank) const;
  // Its holder was asked to give it back (a lease: request()'s `revoke` said so).
  bool asked_back(const std::string& name) const;
  // A lock `rank` holds that another node waits for or asked back, if any (a node whose
  // connection ended holding it would leave them waiting forever: Node::end_of).
  std::optional<std::string> awaited_from(int rank) const;
  uint64_t region() const { return region_; }
  uint64_t acquisitions() const { return stamp_; }  // in this region

 private:
  struct Waiter {
    int rank;
    int64_t ticket;
    bool lease;
  };
  struct Lock {
    int holder = -1;
    int64_t holder_ticket = -1;
    int64_t next_ticket = 0;              // ordered: the ticket that may hold it next
    bool leased = false;                  // the holder keeps it after its exits
    bool revoking = false;                // the holder was asked to give it back
    int revokes = 0;                      // in this region: after kLeaseRevokes, no more leases
    int quiet = 0;                        // releases in a row that found nobody in line
    uint64_t asked = 0;                   // requests so far (confirm_renewal)
    std::deque<Waiter> waiting;
    ckpt::Checkpoint log;                 // the holders' writes, overlaid in grant order
    std::map<int, uint64_t> released_at;  // rank -> its last release's stamp (run timestamp)
  };
  void new_region(uint64_t region);
  // A release from a node already in a window the service has not seen (its renewed lease
  // going back with nothing else asked in that window): that window starts now.
  void catch_up(const std::string& name, int rank);
  // Renewals not yet in effect: lock -> (holder, its window). A request for the lock in the
  // meantime (the older window: other nodes are still in it) cancels it, and asks the holder to
  // give it back (`revoke`); that release then only ends the cancellation (cancelled_).
  std::map<std::string, std::pair<int, uint64_t>> renewals_;
  std::set<std::pair<std::string, int>> cancelled_;
  int next_holder(Lock& l);  // the lock is free: who holds it now, or -1
  std::map<std::string, Lock> locks_;
  uint64_t region_ = 0;
  uint64_t stamp_ = 0;  // acquisitions in region_ so far
};

}  // namespace cape::net
