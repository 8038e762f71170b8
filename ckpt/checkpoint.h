// The in-memory checkpoint: the object every part of cape passes around.
//
// A checkpoint (002_2c61c2cb27f62a9a.txt, Def. 4.1) is a register set and a set of
// memory members (address, value, timestamp). We keep memory members as *runs*: sorted,
// non-overlapping byte ranges, each with one timestamp and, for reduction variables
// (002 Sect. 4.3), the reduction operator and element type. The bytes of all runs live
// back to back in one buffer so that diff, merge and serialisation stay linear walks.
//
//   Checkpoint
//   +-- header: kind, node, sequence, timestamp, load_base, name, [registers], [mappings]
//   +-- runs:   [ {address, length, timestamp, reduction, offset} ... ]   sorted by address
//   +-- bytes:  |run0 bytes|run1 bytes|...                                 offset -> here
//
// A delta (DICKPT) holds what changed; a complete checkpoint holds whole memory regions
// (CAPE-1, 003_45ed75503520c8f4.txt Fig. 2); a merged one is the result of merge().
//
// A run is plain (its bytes are the memory from `address` to `end()`) or *masked*: a page's
// worth of memory with changes scattered in it, stored as a bitmap of its 8-byte words
// followed by the changed words only (the difference of a modified page with its initial
// content, 003_45ed75503520c8f4.txt Sect. III). Masked runs keep a dense scatter of changes
// from costing a run each: 50% of random words changed is one run per page instead of ~128
// (docs/dickpt-format.md, "Masked runs").
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ckpt/buffer.h"

namespace cape::ckpt {

// Every error of this part: bad files, runs outside an image, mismatched reductions.
// The message says what is wrong; callers add the file name.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Kind : uint8_t { delta = 1, complete = 2, merged = 3 };

// OpenMP reduction operators (002 Table 1). `sub` combines partial results with +, as the
// OpenMP specification says for the '-' reduction.
enum class ReduceOp : uint8_t { none = 0, add, mul, sub, band, bor, bxor, land, lor, min, max };
enum class ElemType : uint8_t { none = 0, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64 };

struct Reduction {
  ReduceOp op = ReduceOp::none;
  ElemType type = ElemType::none;
  bool operator==(const Reduction&) const = default;
  bool active() const { return op != ReduceOp::none; }
};

// "0x7fffffffe500": how every part of cape prints a tracee address.
std::string hex_address(uint64_t address);

size_t element_size(ElemType t);  // 0 for none
const char* to_string(Kind k);
const char* to_string(ReduceOp op);  // "+", "*", "-", "&", "|", "^", "&&", "||", "min", "max"
const char* to_string(ElemType t);   // "int32", "uint64", "float", "double", ...
std::optional<ReduceOp> parse_reduce_op(std::string_view s);
std::optional<ElemType> parse_elem_type(std::string_view s);
// Throws Error when `r` is not a valid pair (bitwise op on a float type, op without type...).
void check_reduction(const Reduction& r, uint64_t run_length);

// Architecture tags of the register set.
enum class Arch : uint16_t { none = 0, x86_64 = 1 };

struct Registers {
  Arch arch = Arch::none;
  std::vector<uint8_t> bytes;  // x86_64: struct user_regs_struct
  bool operator==(const Registers&) const = default;
};

// A change of the program's memory map that the node which made the checkpoint saw while
// tracking (docs/dickpt-format.md, "Mapping changes"): after it, [start, end) is private
// anonymous memory with protection `prot` (PROT_READ 1 | PROT_WRITE 2 | PROT_EXEC 4), the
// end of the brk heap when `what` is heap, or unmapped. A node that injects the checkpoint
// makes its map so before it writes a byte, so memory that one node mapped inside a
// parallel region (its heap grew) exists on every node that receives its writes.
inline constexpr uint64_t kMapPage = 4096;
struct MapChange {
  enum class What : uint8_t { unmapped = 0, anon = 1, heap = 2 };
  uint64_t start = 0, end = 0;  // page aligned, start < end
  What what = What::anon;
  uint8_t prot = 0;             // 0 when unmapped
  bool operator==(const MapChange&) const = default;
  bool same_state(const MapChange& o) const { return what == o.what && prot == o.prot; }
};
const char* to_string(MapChange::What w);
// "rw-" for PROT_READ | PROT_WRITE, "---" for none.
std::string prot_string(uint8_t prot);
// Throws Error when `m` is not sorted, page aligned, non-overlapping, with valid fields.
void check_mappings(const std::vector<MapChange>& m);
// `under` with `over` laid on top (where they meet, `over`'s state), sorted, neighbours with
// one state joined. Both must pass check_mappings.
std::vector<MapChange> overlay_mappings(const std::vector<MapChange>& under,
                                        const std::vector<MapChange>& over);

inline constexpr size_t kWordSize = 8;
// A masked run spans at most one page's worth of words, so its bitmap is at most 64 bytes.
inline constexpr uint64_t kMaxMaskedLength = 4096;

// Bytes of the bitmap of a masked run of `length` bytes: a bit per word, in whole u64s.
inline constexpr uint64_t mask_bytes(uint64_t length) { return (length / kWordSize + 63) / 64 * 8; }

struct Run {
  uint64_t address = 0;    // tracee virtual address of the first byte
  uint64_t length = 0;     // in bytes, > 0: the memory the run spans
  uint64_t timestamp = 0;  // Def. 4.1's t
  Reduction reduction;
  uint64_t offset = 0;     // where its stored bytes start in Checkpoint::bytes (in memory only)
  // 0 for a plain run. A masked run: how many of its words are set in its bitmap. Its
  // address and length are word multiples, its first and last word are set, and it stores
  // mask_bytes(length) of bitmap (bit i of u64 i/64 = word i) then the set words in order.
  uint32_t masked_words = 0;

  uint64_t end() const { return address + length; }
  bool masked() const { return masked_words != 0; }
  // Bytes the run occupies in Checkpoint::bytes (and in a file's data block).
  uint64_t stored() const { return masked() ? mask_bytes(length) + kWordSize * masked_words : length; }
  // Bytes of memory the run writes.
  uint64_t memory_bytes() const { return masked() ? kWordSize * masked_words : length; }
};

// Big run tables grow like the bytes do (ckpt/buffer.h): a diff of 64 MiB with 1% of its
// words changed makes ~20,000 runs, whose fresh pages would cost more than the diff itself.
using Runs = std::vector<Run, BufferAllocator<Run>>;

struct Checkpoint {
  Kind kind = Kind::delta;
  uint32_t node = 0;
  uint64_t sequence = 0;
  uint64_t timestamp = 0;
  uint64_t load_base = 0;  // where the executable was loaded (names runs), 0 = unknown
  std::string name;
  std::optional<Registers> registers;
  std::vector<MapChange> mappings;  // sorted, disjoint; applied before the runs
  // A complete checkpoint of a whole process (version 4): its encoded process section
  // (ckpt/process_image.h); empty otherwise.
  std::vector<uint8_t> process;
  Runs runs;
  Bytes bytes;

  // A run's stored bytes: a plain run's memory, a masked run's bitmap and words.
  std::span<const uint8_t> data(const Run& r) const { return {bytes.data() + r.offset, r.stored()}; }
  std::span<uint8_t> data(const Run& r) { return {bytes.data() + r.offset, r.stored()}; }

  // Adds a plain run at or after the end of the last one (a broken order is a bug: it
  // throws). A run that starts where the previous plain run ends, with the same timestamp
  // and no reduction on either, extends it instead, so page-by-page producers give long runs.
  void append(uint64_t address, std::span<const uint8_t> data, uint64_t timestamp,
              Reduction reduction = {});
  // Adds a masked run: `bitmap` has a bit per word of [address, address + length), `words`
  // the set words in order. Throws on a shape that breaks the rules above.
  void append_masked(uint64_t address, uint64_t length, std::span<const uint8_t> bitmap,
                     std::span<const uint8_t> words, uint64_t timestamp);
  // Copies run `r` of `src` (plain or masked) to the end of this checkpoint.
  void append_from(const Checkpoint& src, const Run& r);
  // Copies the part of `r` inside [lo, hi): a masked run cut off its ends becomes plain pieces.
  void append_from(const Checkpoint& src, const Run& r, uint64_t lo, uint64_t hi);

  // Calls f(address, bytes) for each contiguous piece of memory run `r` writes, in address
  // order: the whole run if plain, each stretch of consecutive set words if masked.
  template <class F>
  void for_each_piece(const Run& r, F&& f) const;

  // A checkpoint with this one's header (kind, node, sequence, timestamp, load base, name,
  // registers, mapping changes) and no runs, for operations that rebuild the runs. The
  // process section is not copied.
  Checkpoint header() const;

  uint64_t data_bytes() const;    // stored bytes of every run (the file's data block)
  uint64_t memory_bytes() const;  // bytes of memory the runs write
  bool empty() const { return runs.empty(); }

  // Finds the run whose span holds `address`, or nullptr.
  const Run* find(uint64_t address) const;
  // The byte this checkpoint writes at `address`, or nullptr (not in a run, or in a word a
  // masked run does not mark).
  const uint8_t* at(uint64_t address) const;
};

// A little-endian u64 at any alignment.
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Index of the first word at or after `from` (< words) whose bit in `bitmap` equals `set`,
// or `words`. The bitmap is read with unaligned loads. (Inline: the differ calls it per run.)
inline size_t next_mask_bit(const uint8_t* bitmap, size_t words, size_t from, bool set) {
  while (from < words) {
    size_t w = from / 64;
    uint64_t v = load64(bitmap + 8 * w);
    if (!set) v = ~v;
    v &= ~uint64_t{0} << (from % 64);
    if (v) return std::min(words, w * 64 + static_cast<size_t>(__builtin_ctzll(v)));
    from = (w + 1) * 64;
  }
  return words;
}

template <class F>
void Checkpoint::for_each_piece(const Run& r, F&& f) const {
  const uint8_t* base = bytes.data() + r.offset;
  if (!r.masked()) {
    f(r.address, std::span<const uint8_t>(base, r.length));
    return;
  }
  const size_t words = r.length / kWordSize;
  const uint8_t* packed = base + mask_bytes(r.length);
  size_t k = 0;  // set words before the piece
  size_t i = next_mask_bit(base, words, 0, true);
  while (i < words) {
    size_t e = next_mask_bit(base, words, i, false);
    f(r.address + kWordSize * i, std::span<const uint8_t>(packed + kWordSize * k, kWordSize * (e - i)));
    k += e - i;
    i = next_mask_bit(base, words, e, true);
  }
}

// Checks sorted, non-overlapping, non-empty runs inside `bytes`, and every masked run's
// shape (alignment, bitmap, word count); throws Error naming the run.
void check_invariants(const Checkpoint& c);
// The same checks for one masked run whose stored bytes are `data`; throws Error.
void check_masked(const Run& r, std::span<const uint8_t> data);

}  // namespace cape::ckpt
