// Trap-free re-entry of leased locks, the monitor's side of the page of words it shares with
// libcape (runtime/src/protocol.h, CAPE_LEASE_*; docs/critical.md, "Trap-free re-entry").
//
// A slave keeps a lock's lease after a body whose writes the translator knows (net/node_locks.cpp);
// the lock then gets a slot here. While the slot is OPEN the program enters with a CAS (no trap)
// and logs the body's targets; the monitor reads their bytes at its next runtime call, before
// anything else of that call (Criticals::collect_leases). Every transition of a slot's word is
// a CAS, by three parties: the program (OPEN <-> INSIDE), the monitor thread (close_all() before
// it serves a call, reopen() after), the network's reader thread (end(): a lease asked back).
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "monitor/dirty_tracker.h"
#include "monitor/interval_set.h"

struct cape_lease_page;  // runtime/src/protocol.h

namespace cape::monitor {

class LeaseWords {
 public:
  ~LeaseWords();
  // The page, mapped in the program (and here) at its first use; false when it cannot be.
  bool map(const StoppedThread& st);
  bool mapped() const { return page_ != nullptr; }
  // Before a runtime call is served (any thread's): every OPEN slot closes, so that no body
  // starts without a trap while the monitor captures. False when a body runs in a slot now:
  // its word then says WANTED, its exit traps (CAPE_OP_LEASE_EXIT), and the call waits for it.
  // `exiting` >= 0: the call is that slot's CAPE_OP_LEASE_EXIT (its body is over).
  bool close_all(int exiting = -1);
  // After a call: the slots close_all() closed open again (not those asked back meanwhile).
  void reopen();
  // A lease of lock `name` the node keeps after its exit: its slot, CLOSED until reopen();
  // `key` and `addr` are what libcape matches (the name's address; an atomic's location). -1: none free.
  int assign(const std::string& name, uint64_t key, uint64_t addr, uint64_t run_stamp);
  // The same for a body entered with a trap that runs in the slot (INSIDE, `targets` logged:
  // its exit needs no trap). -1: none free, or the slot is in use.
  int assign_inside(const std::string& name, uint64_t key, uint64_t addr, uint64_t run_stamp,
                    const std::vector<IntervalSet::Interval>& targets);
  void release(const std::string& name);  // the lease is gone: its slot is free
  // A new window (Criticals::carry_leases): the locks with a slot; hold() closes one (whatever
  // its state but INSIDE), restamp() gives it the new window's stamp.
  std::vector<std::string> assigned() const;
  void hold(const std::string& name);
  void restamp(const std::string& name, uint64_t run_stamp);
  void free_all();                        // a window ends or begins
  void forget();                          // the program replaced its image (execve): no page
  // Slots whose log holds targets (validated), for Criticals::collect_leases; then done(slot)
  // empties the log and frees the slot unless `kept`.
  struct Logged {
    int slot;
    std::string name;
    uint64_t run_stamp;
    std::vector<IntervalSet::Interval> targets;
  };
  std::vector<Logged> logs();
  void done(int slot, bool kept);
  // A reader thread (the network's mutex held): lease `name` is asked back. Returns
  // net::Node::kLease* (0 none, 1 idle: nothing logged, 2 logged, 3 a body runs).
  int end(const std::string& name);
  uint64_t entries() const;  // bodies entered without a trap, summed over the slots
  uint64_t taken() const;    // entries that found another thread's body inside (they trapped)
  // Any thread (a reader's, when end() said logged): stops the program at once, so that the
  // monitor reads the logged bodies' writes and the lease goes back without waiting for the
  // program's next runtime call (a long computation after its last body): SIGSTOP queued
  // with a value the supervisor recognises (is_lease_tick), served at its signal-delivery
  // stop and never delivered (as cape1_calls.h's checkpoint ticks). False when it could not.
  bool tick();
  uint64_t ticks() const { return ticks_; }
  // Times a call found a body running in a slot (close_all() false: another thread's, --model=mt).
  uint64_t waits() const { return waits_; }

 private:
  int slot_for(const std::string& name) const;
  std::unique_ptr<Scratch> mem_;
  cape_lease_page* page_ = nullptr;
  bool tried_ = false;
  int pidfd_ = -1;  // the program's (a tick never reaches another process that got its number)
  std::atomic<uint64_t> ticks_{0};
  uint64_t waits_ = 0;  // (the monitor thread's)
  mutable std::mutex mu_;  // names_ (end() reads them from a reader thread)
  static constexpr int kSlots = 16;  // CAPE_LEASE_SLOTS
  std::string names_[kSlots];  // ("" is the unnamed critical's)
  bool used_[kSlots] = {};
  uint64_t stamps_[kSlots] = {};
};

// The signal LeaseWords::tick() sends.
bool is_lease_tick(const siginfo_t& si);

}  // namespace cape::monitor
