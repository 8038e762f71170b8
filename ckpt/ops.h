// Operations on checkpoints: plain functions over in-memory Checkpoints, no processes.
//
//   diff(old, new)   -> delta      runs of changed 8-byte words (CAPE-1's diff, and the
//                                  core of every DICKPT create(): 003_45ed75503520c8f4.txt)
//   apply(delta, image)            writes a delta into a complete image
//   merge(a, b)      -> merged     the operator of 002_2c61c2cb27f62a9a.txt Def. 4.2-4.4
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {

// Finds changed memory and appends it to a checkpoint as runs (a DICKPT create()).
// Changes are found per 8-byte word, words aligned to the absolute address, and memory is
// looked at in 4 KiB blocks aligned to the absolute address:
//  - a block whose changed words form kMaskedMinRuns runs or more becomes one masked run
//    (a bitmap of its words and the changed ones; checkpoint.h), as small as the runs
//    would be and one entry instead of many;
//  - otherwise each stretch of consecutive changed words is a plain run whose first and last
//    byte are trimmed to bytes that really changed, so two nodes writing neighbouring bytes
//    of one word do not overlap. Unchanged bytes inside a run are carried (word granularity).
// Feed spans in increasing address order; a plain run that reaches the end of one span
// continues into the next adjacent span, and is trimmed when it ends (or at finish()). So
// the runs do not depend on how memory is cut into spans at 4 KiB boundaries (page by page
// or region by region); cut anywhere else, the memory they write is still the same.
//
//   ckpt::Differ d(out, timestamp);
//   for (page : dirty_pages) d.add(page.address, original(page), current(page));
//   d.finish();
class Differ {
 public:
  static constexpr size_t kBlock = 4096;
  static constexpr unsigned kMaskedMinRuns = 4;
  static constexpr unsigned kDenseWords = 64;  // a masked block this full: pack while scanning the next

  explicit Differ(Checkpoint& out, uint64_t timestamp = 0) : out_(out), timestamp_(timestamp) {}
  ~Differ() { finish(); }
  Differ(const Differ&) = delete;
  Differ& operator=(const Differ&) = delete;

  void add(uint64_t address, std::span<const uint8_t> old, std::span<const uint8_t> cur);
  // Memory that did not exist before (mapped after start()): compared against zeros.
  void add_against_zero(uint64_t address, std::span<const uint8_t> cur);
  // Room for the diff of `span_bytes` more bytes of memory (its largest possible output),
  // so the output does not move while it grows. Untouched room costs no memory.
  void reserve(size_t span_bytes);
  // Trims the open run's tail. Idempotent.
  void finish();

 private:
  void add_block(uint64_t address, const uint8_t* o, const uint8_t* c, size_t words);
  void add_partial_word(uint64_t address, const uint8_t* o, const uint8_t* c, size_t n);
  void emit_plain(uint64_t address, const uint8_t* o, const uint8_t* c, size_t b, size_t e, size_t n);
  void close_open_run();
  Checkpoint& out_;
  uint64_t timestamp_;
  bool open_ = false;         // the last run ends at a span end and may continue
  uint64_t open_end_ = 0;     // its end address
  uint8_t tail_old_[8] = {};  // old bytes of its last word, to trim when it closes
  size_t tail_len_ = 0;
  bool dense_ = false;        // the last block was masked with >= kDenseWords words
};

// One span, one call: Differ{out, timestamp}.add(address, old, cur) and finish().
void diff_into(Checkpoint& out, uint64_t address, std::span<const uint8_t> old,
               std::span<const uint8_t> cur, uint64_t timestamp = 0);

// The delta from one complete image to another. Regions are matched by address: a region
// of `newer` that `older` lacks is compared against zeros; a region `older` has alone is
// left out (unmapped memory cannot be written back).
Checkpoint diff(const Checkpoint& older, const Checkpoint& newer);

// Writes `delta` into the complete image `image`. A plain run replaces bytes; a reduction
// run combines with them by its operator (memory is the earlier value, Def. 4.2). Throws
// Error, before writing anything, when a run falls outside the image's regions.
void apply(const Checkpoint& delta, Checkpoint& image);

// Combines `n` elements of `dst` with `src` by `r` (dst = dst op src). Throws Error on
// invalid pairs.
void reduce(Reduction r, std::span<uint8_t> dst, std::span<const uint8_t> src);

// `size` bytes of r's identity element, the private initial value of reduction(op: v)
// (OpenMP: 0 for + - | ^ ||, 1 for * &&, ~0 for &, the type's largest value (or +inf) for
// min, its lowest (or -inf) for max): reduce(r, identity, x) leaves x unchanged.
std::vector<uint8_t> reduction_identity(Reduction r, uint64_t size);

struct Conflict {
  uint64_t address = 0;
  uint64_t length = 0;
  bool operator==(const Conflict&) const = default;
};

enum class OnConflict {
  keep_second,  // report it and keep the second checkpoint's bytes
  fail,         // throw Error naming the first conflicting address
};

struct MergeOptions {
  OnConflict on_conflict = OnConflict::keep_second;
  // Optional: reads the common base memory that both checkpoints were made from
  // (address, out). When the same-timestamp bytes differ and one side still holds the base
  // value, the other side's write wins and it is no conflict (a three-way merge). Without
  // it every differing same-timestamp byte is a conflict.
  std::function<void(uint64_t address, std::span<uint8_t> out)> read_base;
  size_t max_conflicts = 1000;  // at most this many are listed; `conflict_bytes` counts all
};

struct MergeResult {
  Checkpoint merged;
  std::vector<Conflict> conflicts;  // Bernstein violations: same timestamp, different values
  uint64_t conflict_bytes = 0;
};

// C = a (+) b (Def. 4.4). For an address held by both: the later timestamp wins (Def. 4.2,
// eq. 2); reduction runs with the same operator and type combine element by element and
// take the later timestamp (eq. 1); same timestamp and different bytes without a reduction
// is a conflict. Registers come from the checkpoint with the later header timestamp (`b`
// on a tie). Mapping changes: the later checkpoint's laid over the earlier one's; two of
// one timestamp that change the same pages differently throw Error (they cannot both be
// replayed). The result is kind `merged`, with the node, sequence and name of `a`.
MergeResult merge(const Checkpoint& a, const Checkpoint& b, const MergeOptions& options = {});

}  // namespace cape::ckpt
