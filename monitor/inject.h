// inject(): writes a checkpoint into the stopped program (docs/monitor.md "create, inject,
// names"; the writing itself is injector/). Its mapping changes are replayed first
// (map_changes.h: memory another node mapped or grew). Every run must lie inside the tracked set (with
// the call's frame boundary), or nothing is written. A checkpoint of the region the
// data-sharing table belongs to never overwrites private data, and a reduction variable
// gets its original value combined with the merged partial results (OpenMP's result on
// every node, however often it is injected). Inside a window, the tracker counts the bytes
// written as written.
#pragma once

#include <cstdint>
#include <string>

#include "ckpt/checkpoint.h"
#include "monitor/address_space.h"
#include "monitor/data_sharing.h"
#include "monitor/dirty_tracker.h"
#include "monitor/window.h"

namespace cape::monitor {

// `c` is the checkpoint named `name` (for messages). Outside a window, a checkpoint of a
// later region moves the window's region number up to just before it (a slave takes the
// master's numbering from its "before").
void inject(const StoppedThread& st, const ckpt::Checkpoint& c, const std::string& name, Window& window,
            const AddressSpace& as, const DataSharing& sharing, uint64_t boundary);

}  // namespace cape::monitor
