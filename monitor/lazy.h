// --sync=lazy: a region's changes reach a slave when its program touches them, not at the
// region's end (docs/monitor.md, "Lazy synchronisation"). The idea is the future work at the
// end of 004_9e6a480351e099dd.txt ("the update of the slave processes' memory at the end of
// each parallel region can be delayed and combined with the update of the sequential part");
// the mechanism (invalidate, fetch on first access) is a page-based DSM's, built on the
// checkpoints CAPE has anyway.
//
// Every node keeps the words it wrote (docs/monitor.md, "Lazy synchronisation", "Who serves
// a page"). Per region ("after" exchange):
//   slave send  outgoing(): the pages it alone may have written in anonymous memory stay on
//              it: their bytes are published (as this exchange's version) in its node's page
//              service and only their list travels, with the runs of the rest (the stack,
//              .data, reductions, lastprivate and threadprivate values, and the first and
//              last page of each range it wrote, where a neighbour's writes usually share a
//              page);
//   master     take_part() takes each list off its part and notes who wrote what; resolve()
//              then fetches the pages that a slave kept but another node wrote too, and
//              turns them into runs (the fetched page against the region's base) that are
//              merged like parts; the pages a slave alone wrote stay its own, invalidated on
//              the master at its inject and on the other slaves;
//   broadcast  publishes the pages the merge changed (the master's memory after inject),
//              then sends each slave s the merged checkpoint cut to the pages that must
//              travel eagerly (the stack, .data, reductions, lastprivate and threadprivate
//              values, and the pages s fetched from the master before: its working set),
//              with the list of the other changed pages and where each is (the master, or
//              the slave that wrote it, and its version).
// Every node:
//   receive    takes the list off the checkpoint (a run at address 0, never memory);
//   inject     first fetches the invalid pages the checkpoint writes (/proc/PID/mem cannot
//              write a missing page), writes it, then invalidates the listed pages: registers
//              them in userfaultfd's missing mode (the uffd tracker's descriptor; under the
//              mprotect tracker one of its own) and drops them (MADV_DONTNEED, a remote syscall);
//   a fault    a handler thread gets the missing-page event of the first access, by the
//              program or by the kernel for it (read(2) into the buffer: the kernel waits for
//              the page, no EFAULT) or by the monitor (process_vm_readv), fetches the page and
//              its successors with the same owner when the program reads on sequentially
//              (1, 2, 4 .. 64 pages) from the node that holds it (a slave's request for
//              another slave's pages goes through the master), installs them
//              write-protected (UFFDIO_COPY), and wakes it;
//   each call  the tracker's copy of a fetched page becomes the fetched bytes (the page's
//              original for the next create(): the program's own writes are what differs).
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/dirty_tracker.h"
#include "monitor/exchange.h"
#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "util/proven_reads.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

struct LazyStats {
  uint64_t pages_invalidated = 0, pages_fetched = 0, fetches = 0, zero_pages = 0;
  uint64_t pages_published = 0, eager_bytes = 0;  // published: every node; eager_bytes: master's broadcasts
  uint64_t pages_kept = 0, pages_resolved = 0;      // kept: a node's; resolved: master, fetched to merge
  uint64_t own_merged = 0;                          // master: its own kept pages another node wrote too
  uint64_t program_copied = 0, program_copies = 0;  // pages the program copied (publish_arena.h), in so many calls
  uint64_t broadcasts_once = 0;                     // master: broadcasts made once for every slave
};

class PublishArena;

// CAPE_LAZY_PROGRAM_COPY: 0 turns the program's publishing copy off (the monitor reads every
// page, as before session 12); N: a publication of at least N pages is copied by the program
// (default kProgramCopyMin). Anything else is a UserError naming the variable.
uint64_t program_copy_min_from_env();
// Every CAPE_LAZY_* variable read by a lazy job (the one above, CAPE_LAZY_COPY_FLOAT,
// CAPE_LAZY_HOT_PROVEN, CAPE_LAZY_OUTGOING_RANGES, CAPE_LAZY_SLAVE_NICE): a bad value is a UserError naming it,
// before any node starts.
void check_lazy_env();
inline constexpr uint64_t kProgramCopyMin = 64;
// CAPE_LAZY_SLAVE_NICE: how much lower (nice +N, 0-19) a slave's program runs than its
// monitor when the job's nodes outnumber the CPUs (supervisor.cpp, launch()); 0 (default: no
// gain measured under the load of session 15, docs/monitor.md), as before. Anything else is a
// UserError naming the variable.
int slave_nice_from_env();
// CAPE_LAZY_SLAVE_CPUS: 1, with more nodes than CPUs the slaves' runtime calls use the CPUs
// other than the master's (supervisor.cpp); 0 (default), by rank as before. Else a UserError.
bool slave_cpus_from_env();
inline constexpr int kSlaveNice = 0;

class LazySync {
 public:
  LazySync(Exchange& ex, int rank, int size, uint64_t program_copy_min = kProgramCopyMin)
      : ex_(ex), rank_(rank), size_(size), program_copy_min_(program_copy_min) {}
  ~LazySync();
  LazySync(const LazySync&) = delete;
  LazySync& operator=(const LazySync&) = delete;

  // A new image: nothing is invalid, the handler stops (its descriptor belonged to the old one).
  void reset();

  // Slave: what travels to the master of its part `part` of an "after" exchange (the rest
  // is published here). `areas`: the tracked set now; `keep_eager`: threadprivate ranges.
  // `undiffed`: pages create() did not diff (undiffed()), kept whole.
  // Its caller sends it, then publish_pending() (the master merges meanwhile; requests for
  // this node's pages wait: Exchange::begin_publishing()).
  ckpt::Checkpoint outgoing(const ckpt::Checkpoint& part, const std::vector<Area>& areas, const IntervalSet& keep_eager,
                            std::vector<uint64_t> undiffed = {});
  // Publishes what the last outgoing() kept; tells `tracker` that the pages its create()
  // skipped are published (their originals).
  void publish_pending(const StoppedThread& st, DirtyTracker& tracker);
  // Before an `after` create() (a slave's, and since session 8 the master's): the pages it
  // may keep without diffing them, nor reading them (it kept them before, nobody reads them,
  // no variable of the data-sharing table meets them: `not_these`).
  // The tracker's originals of what it skipped: this node's published copies.
  DirtyTracker::OriginalSource original_source() {
    return [this](uint64_t page, uint8_t* out) { return ex_.read_published(page, out); };
  }
  IntervalSet undiffed(const std::vector<Area>& areas, const IntervalSet& not_these) const;
  // What this node kept at the `after` exchange before the last: the pages its next window
  // likely writes (a stencil swaps two grids: the same pages every other region; one grid:
  // every region), which may stay writable until its `after` create() (Monitor::open_kept).
  const IntervalSet& kept_two_ago() const { return kept_history_[0]; }

  // Master. A new merge begins (forget the last one's writers); `from` wrote `part`.
  void begin_merge() {
    owner_.clear();
    kept_.clear();
    owned_.clear();
    ++epoch_;
  }
  void note_part(int from, const ckpt::Checkpoint& part);
  // The master's own `after` create() did not diff `pages` (undiffed()): it keeps them, as a
  // slave keeps its (their list instead of runs).
  void take_own(const std::vector<uint64_t>& pages);
  // Slave `from`'s part: takes its list of kept pages off (before it is merged) and notes it.
  void take_part(int from, ckpt::Checkpoint& part);
  // Every part arrived: the pages a node kept that another node wrote too, as runs (the
  // kept page, fetched from the slave or read here (`read_now`) for the master's own, against
  // `read_base`, the region's base) to merge like parts, by node; the pages a slave alone
  // wrote become its own, invalidated here at inject(name); those the master alone kept stay.
  using ReadFn = std::function<void(uint64_t address, std::span<uint8_t> out)>;
  std::vector<std::pair<int, ckpt::Checkpoint>> resolve(const std::string& name, uint64_t timestamp,
                                                        const ReadFn& read_base, const ReadFn& read_now);
  // The master's inject of the merged `merged`: without the pages only the master wrote (its
  // memory holds them; comparing them cost a pass over its share), forced runs kept.
  ckpt::Checkpoint without_own(const ckpt::Checkpoint& merged) const;
  // Instead of broadcasting `merged` (already injected here): publish, then one checkpoint per
  // slave. `areas`: the tracked set now; `keep_eager`: ranges whose pages always travel
  // (threadprivate variables: each node keeps its own copy, the master's page would overwrite it).
  void broadcast(const StoppedThread& st, const ckpt::Checkpoint& merged, const std::vector<Area>& areas,
                 const IntervalSet& keep_eager, DirtyTracker& tracker);

  // A checkpoint `name` arrived (a slave's): takes its page list off it, for inject(name).
  void received(const std::string& name, ckpt::Checkpoint& ck);
  // Before any injection: fetches the invalid pages `ck` writes.
  void before_inject(const ckpt::Checkpoint& ck);
  // After inject(name): invalidates the pages its list names.
  void after_inject(const StoppedThread& st, const std::string& name, DirtyTracker& tracker);
  // At every runtime call (the program stopped): the tracker's copies of fetched pages.
  void at_call(DirtyTracker& tracker);
  // After start(): the tracker may have registered an area again (write-protect mode
  // only); the invalid pages need missing mode back.
  void after_start();
  IntervalSet invalid() {
    std::lock_guard lk(mu_);
    return invalid_;
  }
  // The program (a thread sharing its memory) is about to make mapping call `nr` with `args`
  // (the maps signal's notifier thread, before it lets the call go on; lazy_mappings.cpp):
  // mremap first gets the invalid pages it moves and its source back in one mapping (lazy's
  // registrations split mappings, and mremap refuses a range over several: EFAULT); munmap,
  // mmap(MAP_FIXED), mremap's unmapped parts, a shrinking brk and madvise(MADV_DONTNEED..)
  // make invalid pages gone or zeros: they are forgotten (never fetched). Inside a window
  // (`in_window`) they are fetched first: the tracker diffs what the range holds after the
  // call against them (DirtyTracker::before_drop), so that the zeros of a range unmapped and
  // mapped again there reach the nodes that hold the old bytes.
  void before_mapping_call(long nr, const uint64_t (&args)[6], bool in_window = false);
  const LazyStats& stats() const { return stats_; }
  uint64_t arena_slots() const;  // slots of the publishing arena in use (0: none)
  // Every page a merge ever published (the same set on every node): the determinism check
  // counts them as zeros, since a slave may not hold them yet.
  const IntervalSet& ever_lazy() const { return ever_lazy_; }

 private:
  // broadcast(): would every slave get the same checkpoint? (`lazy`: the pages published.)
  bool same_for_every_slave(const std::vector<uint64_t>& lazy);
  // Publishes each range's pages as its version (the caller holds Exchange::begin_publishing):
  // copied by the program into the arena (publish_arena.h) when they are program_copy_min_
  // pages or more and it can, else read here. Returns the page count.
  struct Publication {
    const std::vector<IntervalSet::Interval>& ranges;
    uint64_t version;
  };
  uint64_t publish(const StoppedThread& st, std::initializer_list<Publication> what);
  uint64_t read_into_slots(const StoppedThread& st, uint64_t a, uint64_t b, uint64_t version);
  bool program_copies(const StoppedThread& st);  // the arena is there (mapped at the first need)
  void handler_loop();
  void serve_fault(uint64_t page);
  // Where an invalid page is: its owner and the version to ask for.
  struct Source {
    int owner = 0;
    uint64_t version = ~uint64_t{0};
    bool operator==(const Source&) const = default;
  };
  struct Invalidation {
    uint64_t start, end;
    Source from;
  };
  Source source_of(uint64_t page) const;  // mu_ held
  // Pages from `page` (invalid, at most `max`) that the same node holds; mu_ held.
  uint64_t same_source(uint64_t page, uint64_t end, uint64_t max) const;
  // Fetches `count` pages from `first` (all invalid, one source) and installs them; mu_ held.
  // `read`: for an access (a fault), not for an inject (the master notes what it reads).
  void fill(uint64_t first, uint64_t count, bool read);
  void register_missing(uint64_t start, uint64_t end);
  // lazy_mappings.cpp, mu_ held: invalid pages in [s, e) no longer hold what was invalidated
  // (`unmapped`: nor is the range registered any more); [s, e) made valid and registered as
  // before lazy (write protection only, or nothing); the end of the brk heap (0: unknown).
  void forget(uint64_t s, uint64_t e, bool unmapped);
  bool keep_refreshed_ = false;  // before_mapping_call in a window: fetched pages go to the tracker
  void make_plain(uint64_t s, uint64_t e);
  uint64_t brk_end() const;
  void open_own_uffd(const StoppedThread& st);

  Exchange& ex_;
  const int rank_, size_;
  const uint64_t program_copy_min_;      // 0: the program copies nothing
  std::shared_ptr<PublishArena> arena_;  // (the page service holds it too: its slots outlive us)
  bool arena_tried_ = false;             // (mapped once; never again after an exec: reset())
  LazyStats stats_;
  // Master: the one rank that wrote each page in this merge, or -1 for several.
  std::unordered_map<uint64_t, int> owner_;
  uint64_t epoch_ = 0;  // "after" exchanges so far: the version of what this node publishes
  // Master: by node, the pages it kept in this merge (a slave's list; the master's own: take_own), with its version.
  std::map<int, std::pair<uint64_t, std::vector<IntervalSet::Interval>>> kept_;
  // Master: by node, the pages it alone wrote in this merge (kept there), with its version.
  std::map<int, std::pair<uint64_t, std::vector<IntervalSet::Interval>>> owned_;
  // Master: by slave, the pages it ever fetched: its working set, which then travels eagerly
  // to it (a stencil's halo, a vector every slave reads): no fetch, only the changed words.
  std::map<int, std::unordered_set<uint64_t>> hot_;
  // Master: the pages it fetched from slaves (its own working set); guarded by mu_.
  std::unordered_set<uint64_t> hot_here_;
  util::ProvenReads read_here_;  // which of them it surely read; guarded by mu_
  // Slave: pages other nodes read (their working sets, from the master's last list): the
  // slave sends its writes there with its part instead of keeping them, so they reach the
  // readers as merged words, without a fetch (a stencil's halo rows).
  IntervalSet wanted_;
  std::pair<uint64_t, std::vector<IntervalSet::Interval>> pending_;  // slave: outgoing()'s kept pages, to publish
  IntervalSet kept_before_;  // every page this node kept (a slave: in a part; the master: alone wrote)
  IntervalSet kept_history_[2];  // what it kept two `after` exchanges ago, and at the last one
  void note_kept(IntervalSet now) { kept_history_[0] = std::exchange(kept_history_[1], std::move(now)); }
  IntervalSet ever_lazy_;
  std::map<std::string, std::vector<Invalidation>> lists_;  // by checkpoint name: what to invalidate
  std::unordered_map<uint64_t, Source> source_;  // invalid pages not on the master; guarded by mu_
  std::mutex mu_;                 // the invalid set, fetching, the refreshes
  IntervalSet invalid_;           // pages not fetched since they were invalidated
  // The maps when every invalid page was last known registered in missing mode: while they
  // are the same, none lost it (only a mapping call or a new registration can: both move
  // the epoch), and a page invalid again needs neither a registration nor a drop.
  MapsEpoch registered_at_;
  IntervalSet registered_;        // ranges lazy registered in missing mode (a superset of invalid_)
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> refreshed_;  // fetched, for the tracker
  std::vector<uint8_t> buf_;      // fetched bytes
  uint64_t next_expected_ = 0;    // the page after the last fetched run (sequential reads)
  uint64_t ahead_ = 1;            // pages fetched at the next sequential fault
  util::ScopedFd uffd_;           // a duplicate of the uffd tracker's, or our own (mprotect)
  bool wp_ = false;               // uffd_ is the uffd tracker's: registrations add write protection
  std::thread handler_;
  std::atomic<bool> stop_{false};
  std::string handler_error_;     // why the handler stopped (a failed job), for the log
  pid_t pid_ = 0;                 // the program
};

}  // namespace cape::monitor
