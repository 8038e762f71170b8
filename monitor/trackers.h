// The three DirtyTracker implementations (declared together: they are small).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "monitor/dirty_tracker.h"
#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

// CAPE-2's way (003_45ed75503520c8f4.txt Sect. III.A): read-only pages, SIGSEGV, copy, unprotect.
// One ptrace stop per fault: the unprotecting mprotect runs in the faulting thread on its way
// back to the faulting instruction, through libcape's resume stub (runtime/src/protocol.h)
// with the thread's registers kept in a scratch mapping shared with the monitor.
class MprotectTracker final : public DirtyTracker {
 public:
  explicit MprotectTracker(const TrackerOptions& options);
  ~MprotectTracker() override;
  TrackerKind kind() const override { return TrackerKind::mprotect; }
  void start(const StoppedThread& t, const std::vector<Area>& areas) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;
  bool on_fault(const StoppedThread& t, const siginfo_t& info) override;
  void before_write(const StoppedThread& t, uint64_t start, uint64_t end) override;
  void thread_exited(pid_t tid) override;  // its frame in the scratch is free again
  // Copies the originals of the tracked pages there now (the notifier's thread); the
  // monitor's thread takes them as written pages at its next entry here (take_dropped).
  void before_drop(long nr, uint64_t start, uint64_t end) override;
  // mremap of tracked memory: its new place is read-only (this tracker's protection moved
  // with it): moved_ counts it, and settle()/on_fault() open the new place. A source split
  // by this tracker's protection (pages written in the window) cannot move (EFAULT): refused.
  // mmap/mprotect without PROT_WRITE: the program's own read-only memory (own_ro_).
  void before_mapping_call(long nr, const uint64_t (&args)[6]) override;
  void settle(const StoppedThread& t) override;
  void set_not_here(IntervalSet pages) override {  // --sync=lazy: these are not kept writable
    not_here_ = std::move(pages);
    lazy_ = true;
  }
  // Skipped pages are protected again, not read; with `keep_originals` their originals are
  // kept aside until the next start().
  void collect_skipping(const StoppedThread& t, const IntervalSet& skip, std::vector<uint64_t>& skipped,
                        bool keep_originals, const PageVisitor& visit) override;
  bool original(uint64_t page, std::span<uint8_t> out) override;
  // Their originals copied now (as a fault would) and writable: no fault, no stop each.
  uint64_t open_until_collect(const StoppedThread& t, const IntervalSet& pages) override;

  // Counters for the bench and the debug log.
  uint64_t one_stop_faults = 0;   // served through the resume stub
  uint64_t pages_ahead = 0;       // neighbours unprotected with a faulting page
  uint64_t finished_by_hand = 0;  // stubs finished by the monitor before a signal handler

 private:
  struct Slot;  // one thread's frame in the scratch mapping
  const Area* area_of(uint64_t a) const;
  void setup_scratch(const StoppedThread& t);
  // mprotect(start, len, prot) for each, in order, inside the program: with libcape's
  // syscall list gadget one stop for them all (protocol.h), else one remote syscall each.
  // The raw results (0 or -errno).
  struct Protect {
    uint64_t start, len;
    int prot;
  };
  std::vector<long> mprotect_all(const StoppedThread& t, const std::vector<Protect>& calls);
  Slot* slot_for(pid_t tid);
  // Copies the originals of [page, page + n pages) (n may shrink if memory ends).
  uint64_t copy_originals(const StoppedThread& t, uint64_t page, uint64_t n);
  uint8_t* copy_of(uint64_t page);  // the original copied at its fault
  // Makes [page, page + n pages) writable: through the stub (one stop) or a remote syscall.
  void unprotect(const StoppedThread& t, Slot* slot, uint64_t page, uint64_t n, int prot);
  // The thread is stopped inside the stub: finish it (run the syscall if it has not, put
  // the registers back). False when it was not inside.
  bool finish_stub_by_hand(const StoppedThread& t, Slot& slot);

  // The pages before_drop() copied, until the monitor's thread takes them into originals_
  // (those written before keep their older original); drop_mu_ guards them, pid_, and
  // areas_ against the notifier's reads.
  void take_dropped(const StoppedThread& t);
  // Opens what the program moved with mremap in this window (before_mapping_call) and is
  // read-only only by this tracker's doing; true when `addr` (0: any) was in it.
  bool open_moved(const StoppedThread& t, uint64_t addr);
  std::mutex drop_mu_;
  std::map<uint64_t, std::vector<uint8_t>> dropped_;
  uint64_t moved_ = 0;    // mremaps of tracked memory in this window not opened yet
  bool foreign_moved_ = false;  // an mremap of other memory (read-only of the program's?) too
  int moved_prot_ = 0;    // the protection of the memory they moved
  IntervalSet own_ro_;    // ranges the program made without PROT_WRITE in this window
  IntervalSet ro_at_start_;  // the program's read-only private memory at start() (main thread)
  pid_t pid_ = 0;
  std::vector<Area> areas_;
  // Written pages -> index of their original in arena_ (pages of kArenaBlock each, kept
  // across windows so the copies go to warm memory).
  std::map<uint64_t, uint32_t> originals_;
  // Pages the program wrote in this window (collect()): the next start() copies them and
  // leaves them writable (they are likely written again), up to a few.
  std::vector<uint64_t> written_;
  bool lazy_ = false;
  IntervalSet not_here_;  // --sync=lazy: invalid pages (set_not_here), never copied at start()
  // collect_skipping(): the pages to skip in this collect() and where they go; the originals
  // of those skipped in this window (keep_originals), by page, until the next start().
  const IntervalSet* skip_ = nullptr;
  std::vector<uint64_t>* skipped_ = nullptr;
  bool keep_skipped_ = false;
  std::unordered_map<uint64_t, std::vector<uint8_t>> skipped_originals_;
  std::vector<PageBuffer> arena_;
  uint32_t used_ = 0;
  bool scratch_tried_ = false;
  std::unique_ptr<Scratch> scratch_;  // the threads' frames
  uint64_t stub_ = 0;
  bool syslist_ = false;  // libcape has the syscall list gadget, and the scratch is there
  std::map<pid_t, std::unique_ptr<Slot>> slots_;
  std::vector<uint64_t> free_frames_;  // frames of threads that exited
  uint64_t frames_used_ = 0;           // frames handed out (kSlots at most)
  uint64_t max_ahead_;  // TrackerOptions::mprotect_ahead; 1 = no neighbours
  bool use_stub_;       // TrackerOptions::mprotect_one_stop
};

// Hands out buffers of at least a given size, preferring ones given back before (warm).
class BufferPool {
 public:
  PageBuffer take(size_t bytes);
  void give(PageBuffer b) { if (b.size()) free_.push_back(std::move(b)); }

 private:
  std::vector<PageBuffer> free_;
};

// userfaultfd write-protection, asynchronous (WP_ASYNC): the kernel marks written pages
// itself with no stop at all; PAGEMAP_SCAN lists them and protects them again. The
// original content comes from a copy of the tracked set, kept from one window to the next:
// start() copies again only what was written, mapped or lost its protection since.
class UffdTracker final : public DirtyTracker {
 public:
  UffdTracker(pid_t pid, const TrackerOptions& options);
  TrackerKind kind() const override { return TrackerKind::uffd; }
  void start(const StoppedThread& t, const std::vector<Area>& areas) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override { collect_in(t, visit, nullptr); }
  bool collect_only(const StoppedThread& t, const IntervalSet& only, const PageVisitor& visit) override {
    collect_in(t, visit, &only);
    return true;
  }
  // Skipped pages are not read: their copies go stale (stale_), their bytes are the
  // original source's from then on, until a scan finds them written again.
  void collect_skipping(const StoppedThread& t, const IntervalSet& skip, std::vector<uint64_t>& skipped,
                        bool keep_originals, const PageVisitor& visit) override {
    (void)keep_originals;  // (the copy or the source has them)
    collect_in(t, visit, nullptr, &skip, &skipped);
  }
  bool original(uint64_t page, std::span<uint8_t> out) override;
  void set_original_source(OriginalSource source) override { source_ = std::move(source); }
  void originals_published(const IntervalSet& pages) override;
  uint64_t open_until_collect(const StoppedThread& t, const IntervalSet& pages) override;
  void stop(const StoppedThread& t) override;
  std::optional<Changes> take_changes(const StoppedThread& t, const std::vector<Area>& areas) override;
  std::optional<Changes> refresh_for_digest(const StoppedThread& t, const std::vector<Area>& track,
                                            const std::vector<Area>& areas) override;
  CopyRun copy_run(uint64_t a, uint64_t len) const override;
  void start_after_refresh(const IntervalSet& written) override;
  // The range joins dropped_: the copies hold the originals, the next collect() reads it
  // (a range still registered, after madvise, would not be reported written).
  void before_drop(long nr, uint64_t start, uint64_t end) override {
    (void)nr;
    std::lock_guard lk(drop_mu_);
    dropped_ = dropped_.unite(IntervalSet::of({{start, end}}));
  }

  // Counters for the bench and the debug log: start()'s work.
  uint64_t start_bytes_read = 0;     // read from the program (new, written or unprotected)
  uint64_t start_bytes_fresh = 0;    // of those, into buffer pages never used before
  uint64_t start_bytes_zeroed = 0;   // known to be zeros (not populated), not read
  uint64_t start_bytes_kept = 0;     // whose copy was still good
  uint64_t start_areas_armed = 0;    // areas registered and protected whole
  uint64_t starts_reused = 0;        // start()s that took the digest's refresh (start_after_refresh)
  double start_ms = 0;               // time in start()
  double start_cpu_ms = 0;           // the monitor's CPU in start() (getrusage)
  uint64_t start_faults = 0;         // the monitor's page faults in start() (fresh copy memory)

  IntervalSet before_inject(const StoppedThread& t, const ckpt::Checkpoint& c) override;
  void after_inject(const StoppedThread& t, const ckpt::Checkpoint& c, const IntervalSet& pages) override;
  uint64_t inject_bytes_taken = 0;   // injected pages whose copy took the checkpoint's bytes

  int userfaultfd() const override { return uffd_.valid() ? uffd_.get() : -1; }
  void refresh_original(uint64_t page, std::span<const uint8_t> bytes) override;
  void set_not_here(IntervalSet pages) override {
    vouch_ = false;
    stale_ = stale_.minus(pages);  // dropped: refresh_original() gives their copy when they come
    not_here_ = std::move(pages);
  }

 private:
  // A copy of [start, end) of the program's memory (never across a gap of the tracked set).
  struct Seg {
    uint64_t start = 0, end = 0;
    PageBuffer buf;      // the copy of `start` is at buf.data() + off
    size_t off = 0;
    size_t touched = 0;  // bytes of buf, from its start, that may hold data (the rest reads as 0)
    bool registered = false;  // (the old way) for stop()
    uint8_t* at(uint64_t a) const { return buf.data() + off + (a - start); }
  };
  struct Spare {  // a buffer no segment uses
    PageBuffer buf;
    size_t touched;
  };
  struct Span {
    uint64_t start, end;
  };
  enum class Scan { written, written_peek, holes, populated, present };
  void collect_in(const StoppedThread& t, const PageVisitor& visit, const IntervalSet* only,
                  const IntervalSet* skip = nullptr, std::vector<uint64_t>* skipped = nullptr);
  const Seg* seg_of(uint64_t page) const;  // the segment holding `page`, or null
  void open_uffd(const StoppedThread& t);
  void start_whole(const StoppedThread& t, const std::vector<Area>& areas);
  void start_kept(const StoppedThread& t, const std::vector<Area>& areas);
  void start_reused(const StoppedThread& t, const IntervalSet& written, const IntervalSet& cover);
  // PAGEMAP_SCAN of [start, end), regions appended to `out`: `written` pages (protected again
  // by the scan; `written_peek`: left as they are), `holes` (no page table entry at all), `populated` pages (present or
  // swapped out, or a uffd-wp marker) or `present` ones. False when part of the range is
  // not registered with WP_ASYNC (`written`, `holes`: nothing reliable said) or unmapped.
  bool scan(uint64_t start, uint64_t end, Scan what, std::vector<Span>& out, bool hull = false);
  // The same for every range of `ranges` (all registered: registered_known()) with one walk
  // over their hull (issue 14: ~40 scans per node and empty region, one per area and kind,
  // each a fixed cost): the kernel skips what is not registered in between (libraries, the
  // heaps' reserved parts); the result is clipped to `ranges`.
  bool scan_hull(const IntervalSet& ranges, Scan what, std::vector<Span>& out);
  // `written` (protected again with `protect`) and `holes` of every range of `ranges` (all
  // registered) with one walk over their hull instead of two; false as scan().
  // CAPE_UFFD_ONE_SCAN=0: two scans, as before (A/B).
  bool scan_hull_both(const IntervalSet& ranges, bool protect, std::vector<Span>& written, std::vector<Span>& holes);
  bool scan_both_wanted() const;
  // Is every range of `ranges` registered with WP_ASYNC? Known when the mappings did not
  // change since registered_ was last right (maps_epoch(), memory_map.h): a registration is
  // lost only with its mapping (unmapped, replaced), which is a mapping call.
  bool registered_known(const IntervalSet& ranges) const;
  void note_registered(const IntervalSet& ranges, bool was_known);
  void arm(uint64_t start, uint64_t end, bool do_register);
  // The segments cover exactly `cover` afterwards: cut where it ends, grown or new where it
  // is not covered yet (whose bytes the caller fills).
  void reshape(const IntervalSet& cover);
  Seg make_seg(uint64_t start, uint64_t end);
  void drop(Seg& s);
  // Reads `read` and zeroes `zero` (program addresses inside the segments), copy_threads_
  // reading at once; a segment whose memory ends unmapped is cut at its first hole.
  void fill(const StoppedThread& t, const IntervalSet& read, const IntervalSet& zero);
  // Program ranges [lo, hi) about to be copied into g: huge pages for the fresh 2 MiB blocks
  // of the copies they fill mostly (dense_huge_).
  struct Fresh {
    Seg* g;
    uint64_t lo, hi;
  };
  void huge_where_dense(const std::vector<Fresh>& ranges);

  pid_t pid_;
  unsigned copy_threads_;  // start()'s copy (TrackerOptions::uffd_copy_threads)
  bool use_copy_gadget_;   // TrackerOptions::uffd_copy
  bool keep_;              // TrackerOptions::uffd_keep
  // fill() and collect_in(): a fresh 2 MiB block of a copy this dense (% of its bytes written
  // at once) gets a huge page (CAPE_UFFD_DENSE_HUGE; 100: only blocks read whole, the rule
  // before session 13); 0 (default): small pages only.
  unsigned dense_huge_ = 0;
  IntervalSet registered_;      // registered with WP_ASYNC, as of registered_epoch_ (scan_hull)
  MapsEpoch registered_epoch_;
  // collect() has the program copy its written pages here with libcape's copy gadget
  // (faster than process_vm_readv); without it (older libcape) they are read.
  bool scratch_tried_ = false;
  std::unique_ptr<Scratch> scratch_;
  util::ScopedFd uffd_, pagemap_;
  std::map<uint64_t, Seg> segs_;  // by start
  IntervalSet not_here_;          // set_not_here()
  std::vector<Spare> spares_;
  // Pages whose written marks a scan cleared (start(), collect()) since take_changes().
  IntervalSet cleared_;
  // refresh_for_digest(): copy_run() answers until anything else is called. The copies of
  // unvouched_ (stale, unconfirmed, not here) are not what memory holds.
  bool vouch_ = false;
  IntervalSet unvouched_;
  // refresh_for_digest()'s cover, while nothing else has touched the tracker since (reused_
  // by the start() that follows it in the same stop: start_after_refresh()); and what the
  // monitor wrote in between, which that start() reads again.
  std::optional<IntervalSet> refreshed_;
  std::optional<IntervalSet> reuse_;
  // What the last start() zeroed in the copies (holes, pages never populated): zeros for
  // copy_run() without touching the copy (a page of zeros marked protected reads as populated).
  IntervalSet zeroed_;
  // --sync=lazy (collect_skipping). Skipped pages are `unconfirmed_` until the node has
  // published them (originals_published()); then `stale_`: their copy is not what memory held
  // at their last scan, source_'s is, until a scan finds them written again (start() then
  // reads them, as any written page). start() reads what is still unconfirmed (memory holds
  // it: a write since would have marked it). Until then original() gives their DATA-0: the
  // copy, for those whose copy was good when skipped (`base_in_copy_`), else the source's
  // (they were stale: what it holds is what memory held at this window's start).
  IntervalSet stale_, unconfirmed_, base_in_copy_;
  OriginalSource source_;
  std::mutex drop_mu_;   // guards dropped_ (before_drop runs on the notifier's thread)
  IntervalSet dropped_;  // before_drop()'s ranges, until the next collect() or start()
};


class FullTracker final : public DirtyTracker {
 public:
  TrackerKind kind() const override { return TrackerKind::full; }
  void start(const StoppedThread& t, const std::vector<Area>& areas) override;
  void collect(const StoppedThread& t, const PageVisitor& visit) override;
  void stop(const StoppedThread& t) override;

 private:
  struct Copy {
    uint64_t start;
    PageBuffer buf;
    size_t size = 0;
  };
  std::vector<Copy> copies_;
  BufferPool pool_;
};

}  // namespace cape::monitor
