// Critical sections across nodes, the node's side (docs/critical.md; beyond the CAPE
// papers). The master's lock service (net/lock_service.h) orders the holders; here a node
//
//   enter(name): keeps what the program wrote so far in the region (a create(), laid into
//                the node's pending part), asks the service for the lock, injects the
//                grant (what other holders wrote under it since this node last held it) and
//                starts the body's nested window (a create() whose result is dropped: the
//                grant's words are the other holders' writes, not this node's);
//   exit(name):  the body's writes (a create()), stamped with the acquisition's order above
//                the region's timestamp, go back with the release, and into the pending part.
//
// The next create() of the region ("after", a barrier's) is laid over the pending part, so
// the node's part holds every write of its window, those made under a lock stamped later
// than the region's own: the end-of-region merge keeps the last holder's value
// (002_2c61c2cb27f62a9a.txt Def. 4.2, eq. 2) and the result is a serial order of the bodies.
//
// What a body's writes carry to other nodes: memory outside the stack, and of the stack only
// the enclosing function's locals the translator names (share()); never private data
// (private_ranges), nor reduction and lastprivate variables (their values are read whole at
// the region's end).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/address_space.h"
#include "monitor/data_sharing.h"
#include "monitor/dirty_tracker.h"
#include "monitor/exchange.h"
#include "monitor/interval_set.h"
#include "monitor/lease_words.h"
#include "monitor/window.h"

namespace cape::monitor {

class Criticals {
 public:
  // `trap_free`: leased bodies with known writes may be re-entered without a trap (the uffd
  // tracker's partial collect: docs/critical.md, "Trap-free re-entry"; CAPE_LOCK_TRAP_FREE=0
  // turns it off). The master's program keeps leases only then (they save it nothing else).
  Criticals(Window& w, AddressSpace& as, DataSharing& sharing, Exchange* ex, int rank, int size, bool trap_free);
  ~Criticals();
  Criticals(const Criticals&) = delete;
  Criticals& operator=(const Criticals&) = delete;

  // A local of the enclosing function that critical bodies and lock holders may write (it is
  // on the stack, which otherwise stays home). Until the next region begins.
  void share(uint64_t addr, uint64_t size);
  // Throw UserError for a misuse (exit without enter, not the innermost, outside a window).
  // enter() with `wait` false (omp_test_lock) returns false, holding nothing, when another
  // node holds the lock; else true.
  // `ticket` >= 0: an ordered loop's logical iteration (the lock goes to 0, 1, ... in order).
  // `writes`: every byte the body can write, when the translator knows them (docs/critical.md,
  // "Bodies with known writes"): then no capture at the entry, and the exit's looks at their
  // pages only (under trackers that can: uffd; the others capture as for any body).
  // `key`, `key_addr`: how libcape names the lock at a trap-free entry (the name's address;
  // an atomic's location), for a body with known writes.
  bool enter(const StoppedThread& st, const std::string& name, uint64_t boundary, bool wait = true,
             int64_t ticket = -1, const std::vector<IntervalSet::Interval>* writes = nullptr, uint64_t key = 0,
             uint64_t key_addr = 0);
  // enter()'s answer for the program: CAPE_LEASE_ENTERED + slot when the body goes on in a
  // slot (its exit trap-free), else 0. Read once.
  long take_answer() { return std::exchange(answer_, 0); }
  // Answers CAPE_LEASE_READY when the page of trap-free re-entry is mapped (else 0).
  long exit(const StoppedThread& st, const std::string& name, uint64_t boundary);
  // Trap-free re-entry (lease_words.h). Before a call is served: may it be now (no body
  // runs without a trap; `exiting`: the slot of a CAPE_OP_LEASE_EXIT)? Then, first of the
  // call: the logged bodies' writes, read before any other capture; after it: the slots open again.
  bool close_leases(int exiting) { return leases_.close_all(exiting); }
  void collect_leases(const StoppedThread& st, uint64_t boundary);
  // A tick's stop (LeaseWords::tick: a lease asked back while bodies' writes are logged): the
  // program stopped anywhere; the logs read now unless a body runs (its exit traps: WANTED).
  void lease_tick(const StoppedThread& st, uint64_t sp);
  void new_image() { leases_.forget(); }
  void after_call() {
    if (window_.is_open() && leases_.mapped() && carried_ != window_.region()) carry_leases();
    if (held_.empty() && window_.is_open()) leases_.reopen();
  }
  // create() at `boundary`: the node's pending part with `fresh` laid over it; the pending
  // part is used up. Its stack below `boundary` (frames of runtime helpers that called
  // enter/exit, omp_set_lock's) is left out, as create() leaves it out.
  ckpt::Checkpoint with_pending(ckpt::Checkpoint&& fresh, uint64_t boundary);
  // start() and stop(): a new window; start() gives its frame boundary (the function that
  // runs the region: its locals lie above).
  void reset(uint64_t start_boundary = 0);
  // region_begin(): the registered locals end with their region.
  void new_region() {
    shared_stack_.clear();
    registered_ = warned_ = false;
  }
  bool holding() const { return !held_.empty(); }
  // One thread of the node at a time holds critical sections and locks (the two-level
  // model: the node's own threads are excluded too); the others' entries wait (stopped).
  bool may_enter(pid_t tid) const { return held_.empty() || owner_ == tid; }
  // Where the networked entries' monitor time went (CAPE_LOG=calls=info, at the end).
  void report_times(int rank) const;

 private:
  struct Held {
    std::string name;
    uint64_t stamp = 0;     // run timestamp of this acquisition (0: one node, no service)
    ckpt::Checkpoint body;  // its writes so far
    bool known = false;     // the body writes `writes` and nothing else (enter's `writes`)
    IntervalSet writes;
    uint64_t key = 0, key_addr = 0;  // enter's
  };
  // A body with known writes is over: its writes (the targets' bytes) go to its Held's body
  // and the pending part, what else changed on their pages is filed as written before it.
  void known_done(const StoppedThread& st, uint64_t boundary);
  bool networked() const { return ex_ && size_ > 1; }
  ckpt::Checkpoint capture(const StoppedThread& st, uint64_t boundary, const IntervalSet* only = nullptr);
  // Files `c` (writes since the last create) under the innermost held lock, if any.
  void attribute(ckpt::Checkpoint&& c, uint64_t boundary);
  IntervalSet travelling(uint64_t boundary);
  const std::vector<IntervalSet::Interval>& stack_spans();  // the main stack, once per window
  void warn_unregistered(const ckpt::Checkpoint& c, const std::string& name);

  Window& window_;
  AddressSpace& space_;
  DataSharing& sharing_;
  Exchange* ex_;
  const int rank_, size_;
  std::vector<Held> held_;
  LeaseWords leases_;
  const bool trap_free_;
  uint64_t carried_ = 0;  // the window whose slots carry_leases() settled
  long answer_ = 0;       // take_answer()
  void carry_leases();
  pid_t owner_ = 0;  // the thread that holds them
  ckpt::Checkpoint pending_;
  bool have_pending_ = false;
  std::vector<IntervalSet::Interval> shared_stack_;
  // The region's file said its shared locals are all registered (share(0, 0)); else a body
  // writing the region's frame (a function of another file, through a pointer) is warned of.
  bool registered_ = false, warned_ = false;
  uint64_t start_boundary_ = 0;
  std::vector<IntervalSet::Interval> stack_;  // the stack's mappings, read once per window
  bool have_stack_ = false;
  uint64_t lowest_boundary_ = 0;  // the deepest capture of the window
  // Microseconds per phase, summed over the networked entries and exits (report_times).
  struct Phases {
    uint64_t enters = 0, exits = 0, granted_writes = 0;
    uint64_t known = 0;  // entries of bodies with known writes
    uint64_t lease_reads = 0;  // collect_leases() that read logged targets
    uint64_t handed = 0;       // trapped entries whose bodies went on in a slot (exit trap-free)
    double lease_read = 0;
    double capture = 0, grant_wait = 0, inject = 0, recapture = 0, exit_capture = 0, release = 0;
  } phases_;
};

}  // namespace cape::monitor
