// The in-memory checkpoint: the object every part of cape passes around.
//
// A checkpoint (002_2c61c2cb27f62a9a.txt, Def. 4.1) is a register set and a set of
// memory members (address, value, timestamp). We keep memory members as *runs*: sorted,
// non-overlapping byte ranges, each with one timestamp and, for reduction variables
// (002 Sect. 4.3), the reduction operator and element type. The bytes of all runs live
// back to back in one buffer so that diff, merge and serialisation stay linear walks.
//
//   Checkpoint
//   +-- header: kind, node, sequence, timestamp, load_base, name, [registers]
//   +-- runs:   [ {address, length, timestamp, reduction, offset} ... ]   sorted by address
//   +-- bytes:  |run0 bytes|run1 bytes|...                                 offset -> here
//
// A delta (DICKPT) holds what changed; a complete checkpoint holds whole memory regions
// (CAPE-1, 003_45ed75503520c8f4.txt Fig. 2); a merged one is the result of merge().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

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

struct Run {
  uint64_t address = 0;    // tracee virtual address of the first byte
  uint64_t length = 0;     // in bytes, > 0
  uint64_t timestamp = 0;  // Def. 4.1's t
  Reduction reduction;
  uint64_t offset = 0;     // where the bytes start in Checkpoint::bytes (in memory only)

  uint64_t end() const { return address + length; }
};

struct Checkpoint {
  Kind kind = Kind::delta;
  uint32_t node = 0;
  uint64_t sequence = 0;
  uint64_t timestamp = 0;
  uint64_t load_base = 0;  // where the executable was loaded (names runs), 0 = unknown
  std::string name;
  std::optional<Registers> registers;
  std::vector<Run> runs;
  std::vector<uint8_t> bytes;

  std::span<const uint8_t> data(const Run& r) const { return {bytes.data() + r.offset, r.length}; }
  std::span<uint8_t> data(const Run& r) { return {bytes.data() + r.offset, r.length}; }

  // Adds a run at or after the end of the last one (a broken order is a bug: it throws).
  // A run that starts where the previous one ends, with the same timestamp and no
  // reduction on either, extends it instead, so page-by-page producers give long runs.
  void append(uint64_t address, std::span<const uint8_t> data, uint64_t timestamp,
              Reduction reduction = {});

  uint64_t payload_bytes() const { return bytes.size(); }
  bool empty() const { return runs.empty(); }

  // Finds the run holding `address`, or nullptr.
  const Run* find(uint64_t address) const;
};

// Checks sorted, non-overlapping, non-empty runs inside `bytes`; throws Error naming the run.
void check_invariants(const Checkpoint& c);

}  // namespace cape::ckpt
