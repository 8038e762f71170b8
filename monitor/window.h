// The tracking window of a parallel region, from start() to stop() (003_45ed75503520c8f4.txt
// Sect. V): the tracker follows the program's writes; between create() calls the window
// keeps what the next one compares against.
//
//   window.open(st, areas);        // start(): region number + 1, the tracker starts
//   create(st, window, ...);       // create.h
//   window.close(st);              // stop()
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/dirty_tracker.h"
#include "monitor/memory_map.h"

namespace cape::monitor {

class Window {
 public:
  // A new image (launched or exec'd): a new tracker; nothing is tracked.
  void reset(std::unique_ptr<DirtyTracker> tracker);
  // start(): tracks `areas` (the tracked set, as the model restricts it); `map_state` is the
  // tracked anonymous memory and brk heap now (map_changes.h: anon_state).
  void open(const StoppedThread& st, std::vector<Area> areas, std::vector<ckpt::MapChange> map_state);
  // stop(): the program gets its protections back; every copy is dropped.
  void close(const StoppedThread& st);

  bool is_open() const { return open_; }
  DirtyTracker& tracker() { return *tracker_; }
  bool has_tracker() const { return tracker_ != nullptr; }
  // The current region's number: start() calls so far. A slave may take the master's (inject.h).
  uint64_t region() const { return region_; }
  void set_region(uint64_t r) { region_ = r; }
  const std::vector<Area>& at_start() const { return at_start_; }
  // The anonymous memory and brk heap at start() or the last create(): its mapping changes
  // since go into the next create()'s checkpoint (docs/dickpt-format.md, "Mapping changes").
  std::vector<ckpt::MapChange>& map_state() { return map_state_; }

  // /proc/PID/maps for a create(). With `may_reuse`, those the last create() of this window
  // read, while /proc/PID/statm's total size and data size (private writable memory and
  // the stack: any mmap, munmap, brk, stack growth or change of write access moves one) are
  // as then and the tracker leaves the maps alone (not mprotect or inproc, whose protections
  // split them): reading the maps cost ~30 us of a critical entry's ~200 (docs/critical.md,
  // "Cost"), statm a few. What statm cannot see (a mapping replaced by one of the same size
  // and access in a critical body) reaches the others at the region's next create(), which
  // reads the maps, instead of with the lock's release.
  const std::vector<Mapping>& maps_for_create(pid_t pid, bool may_reuse);
  // Those maps are read_maps' cache of that stamp (cached_maps), or 0: for
  // AddressSpace::tracked(maps, boundary, stamp).
  uint64_t maps_stamp() const { return maps_stamp_; }

  // Pages outside start()'s areas (mapped or grown since), as the last create() saw them.
  std::map<uint64_t, std::vector<uint8_t>>& fresh_pages() { return fresh_; }
  // The master's DATA-0 of the pages it wrote in the region (their first original), the
  // base of wait_for()'s three-way merge; other pages still hold DATA-0 in its memory.
  std::map<uint64_t, std::vector<uint8_t>>& base_pages() { return base_; }
  // DATA-0 at [address, address + out.size()): the kept base pages, the tracker's originals of
  // the pages create() did not diff (note_skipped), else the program's memory (zeros where
  // it is unmapped).
  void read_base(const Tracee& t, uint64_t address, std::span<uint8_t> out) const;
  // --sync=lazy: pages the master's create() skipped (DirtyTracker::collect_skipping): their
  // base is the tracker's original().
  void note_skipped(const IntervalSet& pages) { skipped_base_ = skipped_base_.unite(pages); }

  // Runs before inject() writes a checkpoint (--sync=lazy fetches the pages it writes that
  // are not here yet: monitor/lazy.h). Empty = nothing.
  std::function<void(const ckpt::Checkpoint&)> before_inject;
  // --sync=lazy: the mapping calls an inject replays (another node's mapping changes) are
  // about to run, as a system call number and its arguments (lazy.h, before_mapping_call).
  std::function<void(long nr, const uint64_t (&args)[6])> before_map_call;

 private:
  std::unique_ptr<DirtyTracker> tracker_;
  bool open_ = false;
  uint64_t region_ = 0;
  std::vector<Area> at_start_;
  std::vector<ckpt::MapChange> map_state_;
  std::map<uint64_t, std::vector<uint8_t>> fresh_;
  std::map<uint64_t, std::vector<uint8_t>> base_;
  IntervalSet skipped_base_;
  std::vector<Mapping> maps_;
  uint64_t maps_size_ = 0, maps_data_ = 0;  // statm when maps_ was read
  uint64_t maps_stamp_ = 0;                  // cached_maps' stamp of maps_ (0: another read)
  bool have_maps_ = false;
};

}  // namespace cape::monitor
