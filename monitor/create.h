// create(): the checkpoint of what the program wrote since start() or the previous create()
// (DICKPT, 003_45ed75503520c8f4.txt Sect. V; docs/monitor.md "create, inject, names"):
//
//   0. the mapping changes since then (map_changes.h), so that memory the program mapped or
//      grew here exists on the nodes that inject the checkpoint before its bytes arrive;
//   1. the pages the tracker says may have been written, diffed word by word against their
//      originals (ckpt::Differ), cut to the tracked set now (the runtime's frames excluded);
//   2. memory start() did not see (mapped or grown since): against zeros the first time,
//      then against what the previous create() saw;
//   3. the data-sharing table's policy (data_sharing.h): what travels, and the values saved
//      whole (reductions, lastprivate, the master's copyin).
//
// Runs carry the region's timestamp (data_sharing.h). The caller names, stamps and keeps it.
#pragma once

#include <cstdint>

#include "ckpt/checkpoint.h"
#include "monitor/address_space.h"
#include "monitor/data_sharing.h"
#include "monitor/dirty_tracker.h"
#include "monitor/window.h"

namespace cape::monitor {

struct CreateSide {
  int rank = 0;
  // The master of a job with slaves keeps DATA-0 of the pages it writes in the window
  // (Window::base_pages: the base of wait_for()'s three-way merge).
  bool keep_base = false;
  // A critical section's nested capture (critical.h): the maps the window's last create()
  // read serve again while the program's size has not changed (Window::maps_for_create).
  bool reuse_maps = false;
  // Whether the stack above the call's frame boundary travels. Not in the master's `before`
  // (001 Fig. 3 line 4): between start() and that create the master wrote no program
  // variable on its stack, only the compiler's spill slots, and the slave that injects it is
  // at another point of the same function (its branch of the template), whose live spill
  // slots it would overwrite (gcc -O2: a pointer to a lastprivate variable, half of it
  // overwritten by the master's int, made the slave read at a wild address).
  bool with_stack = true;
  // --sync=lazy, an `after` (lazy.h): written pages wholly inside `undiffed` (and in what
  // travels) are not diffed, nor read (DirtyTracker::collect_skipping; with keep_base the
  // master's merge finds their DATA-0 through Window::note_skipped); their addresses go to
  // `undiffed_out` instead (the node keeps such a page whole: nobody needs its words).
  const IntervalSet* undiffed = nullptr;
  std::vector<uint64_t>* undiffed_out = nullptr;
  // Only these pages (page-aligned) are looked at; the tracker keeps the marks of the others
  // for the next create(). A critical body whose writes the translator named
  // (docs/critical.md): the caller checks that the tracker can (DirtyTracker::collect_only).
  const IntervalSet* only = nullptr;
  // Within the 8-byte words that meet these bytes, only bytes that changed are kept. The diff
  // keeps whole words in dense pages; a critical section's capture (everything) is cut at
  // byte boundaries and stamped apart: the unchanged rest of a word would pass for a write
  // of this node (docs/critical.md, "Bytes next to a lock's bytes").
  const IntervalSet* exact_in = nullptr;
};

// `boundary`: the runtime call's frame boundary (the stack below it is not captured).
ckpt::Checkpoint create(const StoppedThread& st, Window& window, const AddressSpace& as,
                        const DataSharing& sharing, CreateSide side, uint64_t boundary);

}  // namespace cape::monitor
