// The determinism check (README "What every node must agree on"; docs/monitor.md).
//
// CAPE is right only if every node's program holds the same memory outside its parallel
// regions: every node runs the sequential code (003_45ed75503520c8f4.txt Sect. II), and a
// region's checkpoints carry only what the region changed. A sequential part that reads the
// clock, seeds a random generator from the time or the pid, or reads a file that differs
// between nodes breaks that, and the job would print wrong results without a word. So at the
// start of every parallel region (cape_region_begin, which libcape_cc's fork calls) each node
// digests its tracked memory; the slaves send theirs to the master, which compares them with
// its own once the region's parts have arrived and fails the job, naming the region and the
// memory that differs.
//
//   StateDigest d = digest_state(tracee, space.tracked(boundary), sharing.threadprivate_ranges());
//   exchange.report_state(d.begin, encode_state(d));               // a slave
//   std::string why = compare_states(mine, decode_state(blob), 2, symbols);   // the master
//
// A digest holds, per tracked area (data, bss, heap, anonymous memory), the XXH3 of up to 64
// chunks, so a difference is placed within 1/64 of an area. Threadprivate variables (each
// node's own copy, 002 Fig. 6) count as zeros. The stack is not digested: its unused bytes
// (a local not written yet, the slots of calls made on one node only) differ between nodes
// of a correct program, so locals computed differently are not caught.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ckpt/symbols.h"
#include "monitor/interval_set.h"
#include "monitor/memory_map.h"
#include "monitor/tracee.h"

namespace cape::monitor {

struct StateDigest {
  uint64_t begin = 0;  // regions begun so far (the same count on nodes that agree)
  std::string where;   // the region's "file:line", or ""
  uint64_t loop = 0;   // cape_region_begin_loop's hash of the loop's trip count and chunk, or 0
  struct Part {
    uint64_t start = 0, end = 0, chunk = 0;  // the area, and the bytes each hash covers
    Area::Kind kind = Area::anon;
    std::vector<uint64_t> hashes;
    bool operator==(const Part&) const = default;
  };
  std::vector<Part> parts;
};

// Reads the program's memory in `tracked`; bytes in `zeroed` count as zeros. With `before`
// (the previous digest, made with the same `zeroed`): its hash of a chunk is kept when the
// chunk's area is the same and `dirty` (what may have changed since, including what no
// tracker followed) does not meet the chunk (issue 14: the whole data read at every region's
// begin was O(data) per region on every node).
// With `copies` (a tracker's copies of memory as it is now, DirtyTracker::copy_run: the
// first n > 0 bytes of [a, a + len) are at `bytes`, or zeros, or, neither, not in a copy):
// what they hold is hashed from there, not read from the program (issue 14: one read of a big
// input, not two).
struct CopyPiece {
  const uint8_t* bytes;
  uint64_t n;
  bool zeros;
};
using CopySource = std::function<CopyPiece(uint64_t a, uint64_t len)>;
StateDigest digest_state(const Tracee& t, const std::vector<Area>& tracked, const IntervalSet& zeroed,
                         const StateDigest* before = nullptr, const IntervalSet* dirty = nullptr,
                         const CopySource* copies = nullptr);

std::vector<uint8_t> encode_state(const StateDigest& d);
// Throws UserError when `bytes` is not a digest.
StateDigest decode_state(std::span<const uint8_t> bytes);

// "" when the slave's memory is the master's; else a message for the user: the region, what
// differs first (the area, its addresses and the variables there, from `symbols`), and what
// usually causes it.
std::string compare_states(const StateDigest& master, const StateDigest& slave, int slave_rank,
                           const ckpt::SymbolTable& symbols);

}  // namespace cape::monitor
