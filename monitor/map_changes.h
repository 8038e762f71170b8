// Mapping changes: memory that a node maps, grows or unmaps while it is tracked travels with
// its checkpoint (ckpt::MapChange, docs/dickpt-format.md "Mapping changes"), and a node that
// injects the checkpoint makes its own map so before it writes a byte. Without this, a heap
// that grows inside a parallel region on one node (libcape's heap commits more of its
// reserved range, docs/monitor.md) writes bytes that the other nodes have not mapped.
//
//   create():  changes = map_changes(state at start()/last create(), state now, maps now)
//   inject():  ops = plan_replay(checkpoint.mappings, maps here); run_replay(remote, ops)
//
// Only the tracked private anonymous memory and the brk heap change this way (the stack
// grows by itself; other threads' stacks and TLS are never tracked; files cannot be
// replayed).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "monitor/memory_map.h"

namespace cape::monitor {

class AutoRemoteSyscalls;

// The heap and private anonymous pieces of a tracked set as map states (sorted, joined).
std::vector<ckpt::MapChange> anon_state(const std::vector<Area>& tracked);

// What changed from `before` to `after` (two anon_state()s): ranges that appeared or changed
// protection get their state in `after`; ranges that left it and are no longer private
// anonymous memory in `maps_now` are unmapped. (A range that left it but is still mapped
// has lost its write permission: the mprotect tracker's doing while it tracks, or the
// program's own mprotect, which is not replayed.)
std::vector<ckpt::MapChange> map_changes(const std::vector<ckpt::MapChange>& before,
                                         const std::vector<ckpt::MapChange>& after,
                                         const std::vector<Mapping>& maps_now);
// The state after `changes`: `state` with them laid over, unmapped ranges dropped.
std::vector<ckpt::MapChange> apply_changes(const std::vector<ckpt::MapChange>& state,
                                           const std::vector<ckpt::MapChange>& changes);

// One system call of a replay.
struct MapOp {
  enum Kind { mprotect, mmap, munmap, brk } kind;
  uint64_t start = 0, end = 0;
  int prot = 0;
  bool operator==(const MapOp&) const = default;
};
std::string describe(const MapOp& op);

// The calls that make this node's map (`local`) agree with `changes`, in order; nothing for
// a change it already agrees with. Throws UserError, before anything is done, when a range
// holds something a replay must not touch here (a file, a shared mapping, the stack), or a
// heap change does not continue this node's brk heap. `what` names the checkpoint in that
// message.
std::vector<MapOp> plan_replay(const std::vector<ckpt::MapChange>& changes, const std::vector<Mapping>& local,
                               const std::string& what);

// Runs `ops` in the stopped tracee; throws UserError naming the call that failed.
void run_replay(AutoRemoteSyscalls& remote, const std::vector<MapOp>& ops, const std::string& what);

// The ranges (page-aligned) whose contents the program's mapping call `nr` with arguments
// `a` drops, as the maps signal's notifier sees it before the call runs (maps_signal.h;
// DirtyTracker::before_drop): munmap; mmap with MAP_FIXED (it replaces what was there);
// mremap's source (moved away, or left empty by MREMAP_DONTUNMAP; a resize in place keeps
// it: visiting it again costs a copy, never a write) and MREMAP_FIXED's target; madvise
// MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTNEED_LOCKED; brk below the heap's end
// (`brk_end()`, asked only for brk). Nothing for a call the kernel will refuse anyway.
std::vector<std::pair<uint64_t, uint64_t>> dropped_by(long nr, const uint64_t (&a)[6],
                                                      const std::function<uint64_t()>& brk_end);
// The end of the program's brk heap (its last "[heap]" mapping in /proc/PID/maps), 0 if none.
uint64_t program_brk_end(pid_t pid);

}  // namespace cape::monitor
