#include "ckpt/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace cape::ckpt {

std::string hex_address(uint64_t address) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

size_t element_size(ElemType t) {
  switch (t) {
    case ElemType::none: return 0;
    case ElemType::i8:
    case ElemType::u8: return 1;
    case ElemType::i16:
    case ElemType::u16: return 2;
    case ElemType::i32:
    case ElemType::u32:
    case ElemType::f32: return 4;
    case ElemType::i64:
    case ElemType::u64:
    case ElemType::f64: return 8;
  }
  return 0;
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::delta: return "delta";
    case Kind::complete: return "complete";
    case Kind::merged: return "merged";
  }
  return "?";
}

namespace {
constexpr const char* kOpNames[] = {"none", "+", "*", "-", "&", "|", "^", "&&", "||", "min", "max"};
constexpr const char* kTypeNames[] = {"none",   "int8",   "uint8",  "int16", "uint16", "int32",
                                      "uint32", "int64",  "uint64", "float", "double"};
}  // namespace

const char* to_string(ReduceOp op) {
  auto i = static_cast<size_t>(op);
  return i < std::size(kOpNames) ? kOpNames[i] : "?";
}

const char* to_string(ElemType t) {
  auto i = static_cast<size_t>(t);
  return i < std::size(kTypeNames) ? kTypeNames[i] : "?";
}

std::optional<ReduceOp> parse_reduce_op(std::string_view s) {
  for (size_t i = 0; i < std::size(kOpNames); ++i)
    if (s == kOpNames[i]) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

std::optional<ElemType> parse_elem_type(std::string_view s) {
  for (size_t i = 0; i < std::size(kTypeNames); ++i)
    if (s == kTypeNames[i]) return static_cast<ElemType>(i);
  return std::nullopt;
}

void check_reduction(const Reduction& r, uint64_t run_length) {
  if (static_cast<size_t>(r.op) >= std::size(kOpNames))
    throw Error("unknown reduction operator " + std::to_string(static_cast<int>(r.op)));
  if (static_cast<size_t>(r.type) >= std::size(kTypeNames))
    throw Error("unknown reduction element type " + std::to_string(static_cast<int>(r.type)));
  if (!r.active()) {
    if (r.type != ElemType::none) throw Error("element type without a reduction operator");
    return;
  }
  if (r.type == ElemType::none) throw Error("reduction operator without an element type");
  bool is_float = r.type == ElemType::f32 || r.type == ElemType::f64;
  bool bitwise = r.op == ReduceOp::band || r.op == ReduceOp::bor || r.op == ReduceOp::bxor;
  if (is_float && bitwise)
    throw Error(std::string("reduction '") + to_string(r.op) + "' is not defined on " + to_string(r.type));
  if (run_length % element_size(r.type) != 0)
    throw Error("reduction run of " + std::to_string(run_length) + " bytes is not a whole number of " +
                to_string(r.type) + " elements");
}

namespace {
// resize + memcpy: cheaper than vector::insert for the many small runs of a diff.
void append_bytes(std::vector<uint8_t>& bytes, std::span<const uint8_t> data) {
  size_t at = bytes.size();
  bytes.resize(at + data.size());
  std::memcpy(bytes.data() + at, data.data(), data.size());
}
}  // namespace

void Checkpoint::append(uint64_t address, std::span<const uint8_t> data, uint64_t ts,
                        Reduction reduction) {
  if (data.empty()) return;
  if (address + data.size() < address) throw Error("run wraps around the address space");
  if (!runs.empty() && address < runs.back().end())
    throw Error("runs appended out of order: a run at " + std::to_string(address) +
                " starts before the previous run ends");
  if (reduction.op != ReduceOp::none || reduction.type != ElemType::none) check_reduction(reduction, data.size());
  if (!runs.empty()) {
    Run& last = runs.back();
    if (last.end() == address && last.timestamp == ts && !last.reduction.active() &&
        !reduction.active()) {
      last.length += data.size();
      append_bytes(bytes, data);
      return;
    }
  }
  runs.push_back(Run{address, data.size(), ts, reduction, bytes.size()});
  append_bytes(bytes, data);
}

const Run* Checkpoint::find(uint64_t address) const {
  auto it = std::upper_bound(runs.begin(), runs.end(), address,
                             [](uint64_t a, const Run& r) { return a < r.address; });
  if (it == runs.begin()) return nullptr;
  --it;
  return address < it->end() ? &*it : nullptr;
}

void check_invariants(const Checkpoint& c) {
  uint64_t prev_end = 0;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const Run& r = c.runs[i];
    std::string where = "run " + std::to_string(i);
    if (r.length == 0) throw Error(where + " is empty");
    if (r.address + r.length < r.address) throw Error(where + " wraps around the address space");
    if (i > 0 && r.address < prev_end) throw Error(where + " overlaps or precedes the run before it");
    if (r.offset > c.bytes.size() || r.length > c.bytes.size() - r.offset)
      throw Error(where + " points outside the checkpoint's bytes");
    check_reduction(r.reduction, r.length);
    prev_end = r.end();
  }
}

}  // namespace cape::ckpt
