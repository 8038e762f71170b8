// The network as the monitor sees it: the seam between monitor/ and net/.
//
// The monitor serves the program's runtime calls; send, receive, broadcast and wait_for
// (001_3036025dc34c4021.txt Sect. III.B; 004_9e6a480351e099dd.txt 3.2) go through this
// interface. net/ provides the TCP implementation and cli/ plugs it in (`cape node`);
// `cape monitor` runs alone with no Exchange (it is the master; send/receive are errors).
// Every call blocks; a dead or silent peer makes it throw (a cape::UserError whose
// message names the node), which ends the job.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::monitor {

class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual int rank() const = 0;  // 0 = master
  virtual int size() const = 0;  // number of nodes

  // Sends `ck` (its name is ck.name) to `node`.
  virtual void send(const ckpt::Checkpoint& ck, int node) = 0;
  // Blocks until a checkpoint named `name` has arrived from any node and returns it.
  // Checkpoints that arrive before they are asked for wait in a queue per name.
  virtual ckpt::Checkpoint receive(const std::string& name) = 0;
  // Master only: sends `ck` to every slave.
  virtual void broadcast(const ckpt::Checkpoint& ck) = 0;
  // Master only: receives one checkpoint named `name` from every slave, handing each to
  // `on_part` as it arrives (the monitor merges them, per 004's wait_for).
  virtual void wait_for(const std::string& name,
                        const std::function<void(ckpt::Checkpoint&& part, int from)>& on_part) = 0;
  // The program ended with `status` (a wait status), inside a parallel region's window or
  // not; tells the peers, so they stop too.
  virtual void program_exited(int wait_status, bool in_window) = 0;
  // A signal is about to kill the program: the first frames of its backtrace ("  #0 ... at
  // prog.c:12" lines), which a slave adds to its exit report for the master's message.
  virtual void program_crashed(const std::string& first_frames) { (void)first_frames; }
  // The program is stopped at a runtime call, or has just ended (`now_in_window` false):
  // what it printed so far was printed inside a region's window (`was_in_window`) or not,
  // and from now on it is `now_in_window`. The node routes the program's output by it
  // (net/program_io.h): libcape flushes stdout and stderr before every call. `drain` false:
  // the pipes were read in this stop already (the program has not run since), only the
  // phase changes.
  virtual void program_streams(bool was_in_window, bool now_in_window, bool drain = true) {
    (void)was_in_window, (void)now_in_window, (void)drain;
  }
  // The program has begun its `region`-th parallel region (cape_region_begin; every node
  // counts the same regions). The master's node releases the slaves' lines of that region
  // (net/program_io.h, SlaveLines); a slave's tags its region lines with it.
  virtual void region_begun(uint64_t region) { (void)region; }
  // What the node is doing now, for failure messages ("parallel region at prog.c:12").
  virtual void set_region(const std::string& where) = 0;
  // The determinism check (determinism.h). Slave: sends the digest of its memory at the
  // start of the `begin`-th region to the master. Master: the digests the slaves sent for
  // it, by rank (call it once every slave's part of that region has arrived: each slave
  // sends its digest before its part).
  virtual void report_state(uint64_t begin, std::vector<uint8_t> digest) { (void)begin, (void)digest; }
  virtual std::vector<std::pair<int, std::vector<uint8_t>>> states(uint64_t begin) {
    (void)begin;
    return {};
  }
  // Locks across nodes (the master's lock service, net/lock_service.h; docs/critical.md).
  // Blocks until this node holds lock `name` in region `region`; the grant's timestamp is
  // the acquisition's stamp (1, 2, ... in the region), its runs what other holders wrote
  // under the lock since this node last released it. Then the release, with the writes made
  // holding it (header timestamp: the run timestamp they carry).
  // (The defaults: an Exchange without a lock service.)
  // `wait` false (omp_test_lock): returns at once, a grant with timestamp 0 when the lock is busy.
  // `ticket` >= 0: an ordered loop's iteration; the lock goes to tickets 0, 1, ... in order.
  // `meanwhile` (if any) runs once the request is on its way, before the grant is awaited.
  virtual ckpt::Checkpoint lock_acquire(const std::string& name, uint64_t region, bool wait = true,
                                        int64_t ticket = -1, const std::function<void()>& meanwhile = {}) {
    (void)region, (void)wait, (void)ticket, (void)meanwhile;
    throw std::logic_error("lock '" + name + "': this exchange has no lock service");
  }
  virtual void lock_release(const std::string& name, const ckpt::Checkpoint& writes) {
    (void)writes;
    throw std::logic_error("lock '" + name + "': this exchange has no lock service");
  }
  // Trap-free re-entry (docs/critical.md; net::Node says more): the stamp of the lease this
  // slave keeps of `name` in window `region`, nobody asking for it (0: none); bodies' writes read later, laid
  // over the lease's (false: the lease is gone); the hook a reader thread calls when a lease
  // is asked back (it answers net::Node::kLease*).
  virtual uint64_t lock_lease_stamp(const std::string& name, uint64_t region) {
    (void)name, (void)region;
    return 0;
  }
  // (`kept` runs, under the network's mutex, when they were laid over the lease.)
  virtual bool lock_lease_writes(const std::string& name, const ckpt::Checkpoint& writes,
                                 const std::function<void()>& kept) {
    (void)name, (void)writes, (void)kept;
    return false;
  }
  virtual void set_lease_hook(std::function<int(const std::string&)> hook) { (void)hook; }
  // A body entered with a trap under a lease this node holds in `region` goes on in the
  // program's word (its exit needs no trap): under the network's mutex, `to_slot` gives it the
  // slot, then the lease counts as left. False (nothing done) when the lease was asked back.
  virtual bool lock_lease_hand_over(const std::string& name, uint64_t region, const std::function<bool()>& to_slot) {
    (void)name, (void)region, (void)to_slot;
    return false;
  }
  // --sync=lazy (monitor/lazy.h; docs/monitor.md, "Lazy synchronisation"). Keeps `count`
  // pages from `first` (count * 4096 bytes) as `version`, for the other nodes to fetch
  // (the last two versions of each). fetch_pages: fetches `count` pages from `first` from node
  // `owner` (its newest version <= `version`) into `out`; blocks. (The defaults: an Exchange
  // without a page service.)
  virtual void publish_pages(uint64_t first, uint64_t count, const uint8_t* bytes, uint64_t version) {
    (void)first, (void)count, (void)bytes, (void)version;
    throw std::logic_error("this exchange has no page service (--sync=lazy)");
  }
  // The same, the caller writing the bytes into the returned 4096-byte slots (one per page)
  // before it tells any node of `version`.
  // `in_arena`: slots from the arena set_page_arena() gave, while it has room (a slot's
  // address says where it is): the program copies into them (monitor/publish_arena.h).
  virtual std::vector<uint8_t*> publish_slots(uint64_t first, uint64_t count, uint64_t version,
                                              bool in_arena = false) {
    (void)first, (void)count, (void)version, (void)in_arena;
    throw std::logic_error("this exchange has no page service (--sync=lazy)");
  }
  // Where arena slots come from (4096 bytes each; nullptr: full). `take` keeps the memory it
  // hands out alive as long as the exchange holds it (the page service outlives the monitor).
  virtual void set_page_arena(std::function<uint8_t*()> take) { (void)take; }
  virtual void fetch_pages(uint64_t first, uint64_t count, uint8_t* out, int owner, uint64_t version) {
    (void)first, (void)count, (void)out, (void)owner, (void)version;
    throw std::logic_error("this exchange has no page service (--sync=lazy)");
  }
  // This node's own newest copy of `page` (4096 bytes) into `out` (null: only whether it has
  // one): the trackers' originals of the pages create() did not read (DirtyTracker::set_original_source).
  virtual bool read_published(uint64_t page, uint8_t* out) {
    (void)page, (void)out;
    return false;
  }
  // Between these, requests for this node's pages wait (the monitor fills the copies it
  // publishes after sending what names them).
  // `complete` false: the copies were not all filled (the program died meanwhile): the
  // node refuses requests for its pages from then on rather than answer with them.
  virtual void begin_publishing() {}
  virtual void end_publishing(bool complete = true) { (void)complete; }
  // Master: the pages slave `rank` fetched since the last call.
  virtual std::vector<uint64_t> fetched_pages(int rank) {
    (void)rank;
    return {};
  }
};

}  // namespace cape::monitor
