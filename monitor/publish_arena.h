// --sync=lazy: the publishing arena (issue 14, session 12; docs/monitor.md, "Session 12: the
// program makes the publishing copy").
//
// A node publishes the pages it keeps after a region: its page service holds their bytes as
// the region left them (version v), because another node may ask for v after this node's
// program wrote the page again (lazy.h). Until session 12 the monitor read them out of the
// program with process_vm_readv into heap copies: ~25% of a lazy Jacobi job's CPU. Now the
// program copies them itself, at the runtime call that publishes them, into memory both
// processes map:
//
//   program                              monitor (cape node)
//   0x102000000000 +-----------------+   anywhere +-----------------+
//    (MAP_SHARED,  | lists (256 KiB) | <--memfd-->| lists           |  written by the monitor
//     DONTFORK)    | slot | slot | ..|            | slot | slot | ..|  the page service's copies
//                  +-----------------+            +-----------------+
//
// At the call (the program stopped at its trap) the monitor takes a slot per page from the
// page service (Exchange::publish_slots(..., in_arena)), writes {slot's address in the program,
// page, length} triples into the list area and runs libcape's publishing gadget there
// (protocol.h, CAPE_PUBLISH_GADGET_OFFSET) as a remote call: the program's thread copies the
// runs with `rep movsb` and traps; only then does the call go on (requests for the node's
// pages wait meanwhile, as before). So every copy is made before the program runs one more
// instruction of its own: the version served is the one the region left, as with the
// monitor's copy. The monitor's page service serves from its own mapping of the same slots.
//
// Slots are never freed: a page's slot for version v is the one that held v-2 (the page
// service keeps two), so the arena grows to two slots per page ever published this way, as
// the heap copies did; past CAPE_PUBLISH_ARENA_SPAN the page service hands out heap copies
// again (read with process_vm_readv). The arena lives as long as the node's page service,
// which outlives the program (a slave serves until the master leaves): the page service holds
// it (Exchange::set_page_arena). After an exec the program no longer maps it: no program
// copies from then on (LazySync::reset).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "monitor/dirty_tracker.h"

namespace cape::monitor {

class PublishArena {
 public:
  // Maps the arena into the stopped program (a memfd named after libcape's publishing tag,
  // MADV_DONTFORK) and here. nullptr (and `why`) when libcape has no publishing gadget or
  // the address is taken: the caller copies as before.
  static std::shared_ptr<PublishArena> map(const StoppedThread& t, std::string* why);

  // A 4096-byte slot, nullptr when the arena is full. (The page service's lock is held.)
  uint8_t* take_slot();
  bool owns(const uint8_t* p) const { return p >= slots_begin_ && p < end_; }
  // Where the program sees `p` (a slot or a list entry).
  uint64_t in_program(const uint8_t* p) const { return scratch_->remote() + static_cast<uint64_t>(p - scratch_->local()); }
  // The list area: {dst, src, len} triples, a zero length ends it.
  uint64_t* list() const { return reinterpret_cast<uint64_t*>(scratch_->local()); }
  static size_t list_triples();  // how many fit, with the end
  uint64_t slots_used() const { return next_.load(); }

 private:
  explicit PublishArena(std::unique_ptr<Scratch> s);
  std::unique_ptr<Scratch> scratch_;
  uint8_t* slots_begin_;
  uint8_t* end_;
  std::atomic<uint64_t> next_{0};  // slots handed out
};

}  // namespace cape::monitor
