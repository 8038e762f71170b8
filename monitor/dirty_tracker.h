// Dirty tracking backends behind one interface (../shared/ARCHITECTURE.md "Dirty
// tracking"; docs/monitor.md has the measurements behind the choices).
//
//   start(areas)    begin tracking the tracked set of start(); remember original contents
//   collect(visit)  visit(page, original, current) for every page that may have been written
//                   since start() or the previous collect(), in address order; afterwards
//                   those pages are clean again and `current` is their new original
//   stop()          end tracking; the program's writes until the next start() are its own
//                   business (a tracker may keep watching them to make that start() cheap:
//                   `uffd` keeps its protection and copies, docs/monitor.md)
//
// A tracker may report a page that did not change (the word diff drops it); it must never
// miss one that did. Memory outside the start() areas is not the tracker's business
// (the monitor compares it against zeros).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "monitor/tracee.h"

namespace cape::monitor {

// Memory for page copies: mmap'd, never zeroed by us; trackers keep them across windows so
// copies go to warm memory. Small pages unless huge() is asked for a part that will be
// filled whole: a huge page's first touch zeroes 2 MiB, and under load the zeroing was
// most of a sparse first copy (issue 14: a .bss read 10.8 MB of 96 MB, 0.5-0.8 s a node).
class PageBuffer {
 public:
  PageBuffer() = default;
  explicit PageBuffer(size_t bytes);
  ~PageBuffer();
  PageBuffer(PageBuffer&& o) noexcept;
  PageBuffer& operator=(PageBuffer&& o) noexcept;
  uint8_t* data() const { return p_; }
  size_t size() const { return size_; }
  // At least `bytes` (mremap: the contents stay, the new part is not touched; data() may move).
  void grow(size_t bytes);
  // Transparent huge pages for the 2 MiB blocks inside [from, to) (offsets; best effort):
  // fewer faults for a part about to be written whole.
  void huge(size_t from, size_t to);

 private:
  uint8_t* p_ = nullptr;
  size_t size_ = 0;
  bool split_ = false;  // huge() made it more than one mapping
};

enum class TrackerKind { mprotect, uffd, full, inproc };
const char* to_string(TrackerKind k);
TrackerKind parse_tracker_kind(const std::string& s);  // throws UserError

// What a tracker may use: the tracee's memory and one stopped thread to run syscalls in.
struct StoppedThread {
  const Tracee& tracee;
  pid_t tid;
  uint64_t gadget;  // libcape's `syscall; int3`
};

// Memory shared by the monitor and the program: a MAP_SHARED memfd (named after a tag
// string in libcape's text) mapped at kScratchAddress in the program and anywhere here.
// libcape's gadgets read and write it (runtime/src/protocol.h); the tracked set never
// includes shared mappings, and the fixed address, far below the program's mmap area and
// far above its heap, leaves the program's own mappings where they would be without it.
inline constexpr uint64_t kScratchAddress = 0x100000000000;  // 16 TiB
class Scratch {
 public:
  // nullptr (and `why` set) when it cannot be made: the caller works without.
  // `populate`: allocate every page now (no faults when it is first used, on either side).
  // `at`: another fixed address (the lease page of docs/critical.md, "Trap-free re-entry").
  static std::unique_ptr<Scratch> map(const StoppedThread& t, uint64_t name_in_tracee, size_t bytes,
                                      bool populate, std::string* why, uint64_t at = kScratchAddress);
  ~Scratch();
  uint8_t* local() const { return local_; }
  uint64_t remote() const { return at_; }
  size_t size() const { return size_; }

 private:
  Scratch(uint8_t* local, size_t size, uint64_t at) : local_(local), size_(size), at_(at) {}
  uint8_t* local_;
  size_t size_;
  uint64_t at_;
};

// True when libcape in the tracee carries `tag` at gadget + offset (protocol.h).
bool has_gadget(const StoppedThread& t, uint64_t offset, const char* tag);

using PageVisitor = std::function<void(uint64_t page, std::span<const uint8_t> original,
                                       std::span<const uint8_t> current)>;

class DirtyTracker {
 public:
  virtual ~DirtyTracker() = default;
  virtual TrackerKind kind() const = 0;
  virtual void start(const StoppedThread& t, const std::vector<Area>& areas) = 0;
  virtual void collect(const StoppedThread& t, const PageVisitor& visit) = 0;
  // collect() of the pages in `only` (page-aligned) alone: the others keep their marks for the
  // next collect(). A critical body whose writes the translator named needs no more
  // (docs/critical.md, "Bodies with known writes"). false: this tracker cannot (nothing done).
  virtual bool collect_only(const StoppedThread& t, const IntervalSet& only, const PageVisitor& visit) {
    (void)t, (void)only, (void)visit;
    return false;
  }
  virtual void stop(const StoppedThread& t) = 0;

  // --sync=lazy (docs/monitor.md, "Lazy synchronisation"): collect(), except that the written
  // pages inside `skip` (page-aligned) are neither read nor visited, only added to `skipped`
  // (ascending): a node that keeps such a page whole needs no word of it. With
  // `keep_originals`, original() gives their DATA-0 until the next start() (the master's
  // merge, when another node wrote the page too). The default reads them and drops them.
  virtual void collect_skipping(const StoppedThread& t, const IntervalSet& skip, std::vector<uint64_t>& skipped,
                                bool keep_originals, const PageVisitor& visit);
  // DATA-0 of a page collect_skipping() skipped in this window; false when not known.
  virtual bool original(uint64_t page, std::span<uint8_t> out) {
    (void)page, (void)out;
    return false;
  }
  // --sync=lazy: where a tracker that keeps copies (uffd) may read, later, what a skipped page
  // held when it was skipped (this node's page service, which publishes it right after), so
  // that it need not copy it: `source(page, out)` copies it to `out` (4096 bytes) and says
  // whether it had it; with `out` null it only says whether it has it.
  using OriginalSource = std::function<bool(uint64_t page, uint8_t* out)>;
  virtual void set_original_source(OriginalSource source) { (void)source; }
  // The skipped `pages` are now in the source, as they were when skipped (until then, and if
  // never, the tracker cannot count on it).
  virtual void originals_published(const IntervalSet& pages) { (void)pages; }
  // --sync=lazy: `pages` (page-aligned), which the node keeps whole region after region (the
  // window's `after` collect_skipping() skips them: LazySync::undiffed()), stay writable
  // until the window's next collect(), which finds them all written (and protects them
  // again): writing them costs no fault (issue 14: ~2,700 faults per node and Jacobi sweep).
  // A collect() that does not skip one diffs it against its original like any written page.
  // Returns the pages opened (none: this tracker faults on them as before).
  virtual uint64_t open_until_collect(const StoppedThread& t, const IntervalSet& pages) {
    (void)t, (void)pages;
    return 0;
  }

  // A SIGSEGV signal-stop of thread `t.tid`: true when it was a tracking fault that has
  // been served (resume without delivering it).
  virtual bool on_fault(const StoppedThread& t, const siginfo_t& info) {
    (void)t, (void)info;
    return false;
  }
  // The monitor (inject) or the kernel (a signal frame) is about to write [start, end):
  // make it writable and count it as written.
  virtual void before_write(const StoppedThread& t, uint64_t start, uint64_t end) {
    (void)t, (void)start, (void)end;
  }
  // Outside a window, the monitor is about to write checkpoint `c` (inject()): a tracker that
  // keeps copies between windows may take the written bytes into its copies instead of
  // reading the pages again at the next start() (issue 14: the merged result injected at
  // every region's end made uffd's next start() copy it back). Returns the pages it will
  // take; after the write, after_inject() with them.
  virtual IntervalSet before_inject(const StoppedThread& t, const ckpt::Checkpoint& c) {
    (void)t, (void)c;
    return {};
  }
  virtual void after_inject(const StoppedThread& t, const ckpt::Checkpoint& c, const IntervalSet& pages) {
    (void)t, (void)c, (void)pages;
  }
  // start()'s answer to the program (0; `inproc`: CAPE_INPROC_ARMED, it protects itself).
  virtual long start_answer() const { return 0; }
  // Thread `tid` of the program has exited (a multithreaded program: its state can go).
  virtual void thread_exited(pid_t tid) { (void)tid; }
  // --sync=lazy (monitor/lazy.h): the tracker's userfaultfd, -1 when it has none.
  virtual int userfaultfd() const { return -1; }
  // --sync=lazy: the monitor installed `bytes` as the page at `page` (a fetched page, write
  // protected, not counted as written): a kept copy of that page becomes them.
  virtual void refresh_original(uint64_t page, std::span<const uint8_t> bytes) { (void)page, (void)bytes; }
  // --sync=lazy: pages not here yet (dropped, fetched on first access): start() must not
  // read them (refresh_original gives their copy when they come).
  virtual void set_not_here(IntervalSet pages) { (void)pages; }
  // For the determinism check (determinism.h), which then digests again only what may have
  // changed (issue 14: it read all of the data at every region's begin): the pages that may
  // have been written since the previous call, inside `covered`, the part of `areas` this
  // tracker followed all along (outside it anything may have changed). nullopt: it cannot
  // say (it follows writes only inside windows).
  struct Changes {
    IntervalSet changed, covered;
  };
  virtual std::optional<Changes> take_changes(const StoppedThread& t, const std::vector<Area>& areas) {
    (void)t, (void)areas;
    return std::nullopt;
  }
  // The same at a region's begin, outside a window, by a tracker that keeps copies between
  // windows (uffd): it first brings its copies up to date with memory as start() would with
  // `track` (the start() that follows finds only what is written after this), so the digest
  // hashes copy_run()'s bytes instead of reading the program (issue 14: the digest and the
  // first start() read a matvec's whole matrix twice, the second start() a third time).
  // nullopt: the tracker keeps no such copies (take_changes() then).
  virtual std::optional<Changes> refresh_for_digest(const StoppedThread& t, const std::vector<Area>& track,
                                                    const std::vector<Area>& areas) {
    (void)t, (void)track, (void)areas;
    return std::nullopt;
  }
  // The program has not run since refresh_for_digest() (one stop: region_begin deferred onto
  // start()'s trap), and the monitor wrote only `written` (page-aligned) since: the next
  // start(), if its areas are the refresh's `track`, takes that refresh as its own and reads
  // only `written` again, instead of scanning the tracked set once more (issue 14: two
  // PAGEMAP_SCANs per node and region). Any other call on the tracker before that start()
  // (an inject between them, as a slave's `before` under --model=mt) cancels it.
  virtual void start_after_refresh(const IntervalSet& written) { (void)written; }
  // After refresh_for_digest(), before the program or the monitor changes anything: the
  // first `n` (> 0) bytes of [a, a + len) (page-aligned, len > 0) are in the tracker's copy,
  // as memory holds them, at `bytes`; or are zeros (a copy never written there: reading it
  // would fault in its pages, a page of zeros marked protected reads as populated); or,
  // neither, have no such copy.
  struct CopyRun {
    const uint8_t* bytes;
    uint64_t n;
    bool zeros = false;
  };
  virtual CopyRun copy_run(uint64_t a, uint64_t len) const {
    (void)a;
    return {nullptr, len};
  }

  // Called by the maps signal's notifier thread (maps_signal.h), inside a window, before the
  // program's own call drops the contents of [start, end) (page-aligned): munmap, mmap with
  // MAP_FIXED, mremap's source, madvise(MADV_DONTNEED), brk shrinking. The pages of the
  // tracked set there are visited by the next collect() if still mapped then, against what
  // they held before the call: a range unmapped and mapped again inside a region reads as
  // zeros, and those zeros travel (issue 14: the writes to the new mapping were lost under
  // --tracker mprotect, and under uffd with --sync lazy). Thread-safe; must not block on the
  // program (which waits in its call). Throws UserError when the call cannot be followed (the
  // notifier then ends the program after saying why).
  virtual void before_drop(long nr, uint64_t start, uint64_t end) { (void)nr, (void)start, (void)end; }
  // The same thread, for every mapping call inside a window (before before_drop): a tracker
  // whose protection the call would carry along (mremap under mprotect) takes note, or
  // refuses with UserError.
  virtual void before_mapping_call(long nr, const uint64_t (&args)[6]) { (void)nr, (void)args; }
  // create(), before it reads the maps: the program's mappings as the program made them
  // where the tracker's protection moved with one (mprotect: a mapping the program moved
  // with mremap inside the window is read-only at its new place).
  virtual void settle(const StoppedThread& t) { (void)t; }

  // Counters for the bench and the debug log.
  uint64_t faults = 0;        // tracking faults served
  uint64_t pages_visited = 0; // pages handed to collect()'s visitor
  uint64_t pages_skipped = 0; // collect_skipping(): written pages not read
  uint64_t originals_from_source = 0;  // copies made good from the original source (uffd)
  uint64_t pages_opened = 0;  // open_until_collect(): pages left writable in windows, summed
};

// The trackers' variants: the defaults are what cape uses; the benchmark and the tests that
// compare the variants choose others (`cape monitor` has a flag for each).
struct TrackerOptions {
  // mprotect: a sequential writer gets up to this many pages unprotected at once, twice as
  // many each time (1..256; 1 = the faulting page only).
  unsigned mprotect_ahead = 16;
  // mprotect: one ptrace stop per fault through libcape's resume stub; false = two stops
  // (a remote mprotect), CAPE-2's literal way.
  bool mprotect_one_stop = true;
  // uffd: the program copies its written pages into the scratch (libcape's copy gadget);
  // false = the monitor reads them.
  bool uffd_copy = true;
  // uffd: threads copying the tracked set at start() (1..16).
  unsigned uffd_copy_threads = 2;
  // uffd: keep the registration, the write protection and the page copies from one window to
  // the next, so that start() copies only what was written (or mapped) since; false = every
  // start() registers, protects and copies the whole tracked set and stop() unregisters it.
  bool uffd_keep = true;
};

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, pid_t pid, const TrackerOptions& options);

}  // namespace cape::monitor
