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
// resize (no zero fill: ckpt::Bytes) + memcpy: cheaper than vector::insert for the many
// small runs of a diff.
void append_bytes(Bytes& bytes, std::span<const uint8_t> data) {
  size_t at = bytes.size();
  bytes.resize(at + data.size());
  std::memcpy(bytes.data() + at, data.data(), data.size());
}
}  // namespace

void check_masked(const Run& r, std::span<const uint8_t> data) {
  if (r.reduction.op != ReduceOp::none || r.reduction.type != ElemType::none)
    throw Error("masked run carries a reduction (reductions are always plain runs)");
  if (r.address % kWordSize != 0 || r.length % kWordSize != 0)
    throw Error("masked run at " + hex_address(r.address) + " of " + std::to_string(r.length) +
                " bytes is not made of whole 8-byte words");
  if (r.length == 0 || r.length > kMaxMaskedLength)
    throw Error("masked run of " + std::to_string(r.length) + " bytes (at most " +
                std::to_string(kMaxMaskedLength) + ")");
  const size_t words = r.length / kWordSize, nbitmap = mask_bytes(r.length);
  if (data.size() < nbitmap) throw Error("masked run's bitmap is cut short");
  uint64_t set = 0;
  for (size_t i = 0; i < nbitmap; i += 8) set += static_cast<uint64_t>(__builtin_popcountll(load64(data.data() + i)));
  if (words % 64 != 0 && (load64(data.data() + nbitmap - 8) >> (words % 64)) != 0)
    throw Error("masked run's bitmap has bits past its " + std::to_string(words) + " words");
  if (set == 0 || !(data[0] & 1) || !((data[(words - 1) / 8] >> ((words - 1) % 8)) & 1))
    throw Error("masked run's first and last words are not both marked (the run must be tight)");
  if (set != r.masked_words)
    throw Error("masked run marks " + std::to_string(set) + " words but says it holds " +
                std::to_string(r.masked_words));
  if (data.size() != nbitmap + kWordSize * set)
    throw Error("masked run stores " + std::to_string(data.size()) + " bytes, its bitmap says " +
                std::to_string(nbitmap + kWordSize * set));
}

namespace {
// Appended runs must come in address order.
void check_order(const Runs& runs, uint64_t address, uint64_t length) {
  if (address + length < address) throw Error("run wraps around the address space");
  if (!runs.empty() && address < runs.back().end())
    throw Error("runs appended out of order: a run at " + std::to_string(address) +
                " starts before the previous run ends");
}
}  // namespace

void Checkpoint::append(uint64_t address, std::span<const uint8_t> data, uint64_t ts,
                        Reduction reduction) {
  if (data.empty()) return;
  check_order(runs, address, data.size());
  if (reduction.op != ReduceOp::none || reduction.type != ElemType::none) check_reduction(reduction, data.size());
  if (!runs.empty()) {
    Run& last = runs.back();
    if (last.end() == address && last.timestamp == ts && !last.reduction.active() && !reduction.active() &&
        !last.masked() && last.offset + last.length == bytes.size()) {
      last.length += data.size();
      append_bytes(bytes, data);
      return;
    }
  }
  runs.push_back(Run{address, data.size(), ts, reduction, bytes.size()});
  append_bytes(bytes, data);
}

void Checkpoint::append_masked(uint64_t address, uint64_t length, std::span<const uint8_t> bitmap,
                               std::span<const uint8_t> words, uint64_t ts) {
  check_order(runs, address, length);
  Run r{address, length, ts, {}, bytes.size(), static_cast<uint32_t>(words.size() / kWordSize)};
  if (words.size() % kWordSize != 0 || words.size() / kWordSize > kMaxMaskedLength / kWordSize)
    throw Error("masked run's words are not whole 8-byte words");
  if (r.masked_words == 0) throw Error("masked run without words");
  if (bitmap.size() != mask_bytes(length)) throw Error("masked run's bitmap has the wrong size");
  append_bytes(bytes, bitmap);
  append_bytes(bytes, words);
  try {
    check_masked(r, data(r));
  } catch (...) {
    bytes.resize(r.offset);
    throw;
  }
  runs.push_back(r);
}

void Checkpoint::append_from(const Checkpoint& src, const Run& r) {
  if (!r.masked()) return append(r.address, src.data(r), r.timestamp, r.reduction);
  check_order(runs, r.address, r.length);
  Run copy = r;
  copy.offset = bytes.size();
  append_bytes(bytes, src.data(r));
  runs.push_back(copy);
}

void Checkpoint::append_from(const Checkpoint& src, const Run& r, uint64_t lo, uint64_t hi) {
  lo = std::max(lo, r.address);
  hi = std::min(hi, r.end());
  if (lo >= hi) return;
  if (lo == r.address && hi == r.end()) return append_from(src, r);
  if (!r.masked()) return append(lo, src.data(r).subspan(lo - r.address, hi - lo), r.timestamp, r.reduction);
  src.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) {
    uint64_t a = std::max(lo, address), b = std::min(hi, address + piece.size());
    if (a < b) append(a, piece.subspan(a - address, b - a), r.timestamp);
  });
}

Checkpoint Checkpoint::header() const {
  Checkpoint out;
  out.kind = kind;
  out.node = node;
  out.sequence = sequence;
  out.timestamp = timestamp;
  out.load_base = load_base;
  out.name = name;
  out.registers = registers;
  out.mappings = mappings;
  return out;
}

uint64_t Checkpoint::data_bytes() const {
  uint64_t n = 0;
  for (const Run& r : runs) n += r.stored();
  return n;
}

uint64_t Checkpoint::memory_bytes() const {
  uint64_t n = 0;
  for (const Run& r : runs) n += r.memory_bytes();
  return n;
}

const Run* Checkpoint::find(uint64_t address) const {
  auto it = std::upper_bound(runs.begin(), runs.end(), address,
                             [](uint64_t a, const Run& r) { return a < r.address; });
  if (it == runs.begin()) return nullptr;
  --it;
  return address < it->end() ? &*it : nullptr;
}

const uint8_t* Checkpoint::at(uint64_t address) const {
  const Run* r = find(address);
  if (!r) return nullptr;
  const uint8_t* base = bytes.data() + r->offset;
  if (!r->masked()) return base + (address - r->address);
  size_t i = (address - r->address) / kWordSize, g = i / 64;
  uint64_t bits = load64(base + 8 * g);
  if (!((bits >> (i % 64)) & 1)) return nullptr;
  size_t k = static_cast<size_t>(__builtin_popcountll(bits & ((uint64_t{1} << (i % 64)) - 1)));
  for (size_t h = 0; h < g; ++h) k += static_cast<size_t>(__builtin_popcountll(load64(base + 8 * h)));
  return base + mask_bytes(r->length) + kWordSize * k + (address - r->address) % kWordSize;
}

const char* to_string(MapChange::What w) {
  switch (w) {
    case MapChange::What::unmapped: return "unmapped";
    case MapChange::What::anon: return "anon";
    case MapChange::What::heap: return "heap";
  }
  return "?";
}

std::string prot_string(uint8_t prot) {
  std::string s = "---";
  if (prot & 1) s[0] = 'r';
  if (prot & 2) s[1] = 'w';
  if (prot & 4) s[2] = 'x';
  return s;
}

void check_mappings(const std::vector<MapChange>& m) {
  for (size_t i = 0; i < m.size(); ++i) {
    const MapChange& x = m[i];
    std::string where = "mapping change " + std::to_string(i);
    if (x.start % kMapPage || x.end % kMapPage) throw Error(where + " is not page aligned");
    if (x.start >= x.end) throw Error(where + " is empty or reversed");
    if (i > 0 && x.start < m[i - 1].end) throw Error(where + " overlaps or precedes the one before it");
    if (static_cast<uint8_t>(x.what) > static_cast<uint8_t>(MapChange::What::heap))
      throw Error(where + " has an unknown kind " + std::to_string(static_cast<int>(x.what)));
    if (x.prot & ~7u) throw Error(where + " has unknown protection bits " + std::to_string(x.prot));
    if (x.what == MapChange::What::unmapped && x.prot != 0) throw Error(where + " is unmapped with a protection");
  }
}

std::vector<MapChange> overlay_mappings(const std::vector<MapChange>& under, const std::vector<MapChange>& over) {
  std::vector<MapChange> out;
  auto push = [&](MapChange x) {
    if (!out.empty() && out.back().end == x.start && out.back().same_state(x))
      out.back().end = x.end;
    else
      out.push_back(x);
  };
  size_t j = 0;
  std::vector<MapChange> all;
  // Sized ahead (each `over` change cuts at most one `under` change in two): this runs at
  // every create() (issue 14, session 14).
  all.reserve(under.size() + 2 * over.size());
  out.reserve(all.capacity());
  for (const MapChange& u : under) {
    // The parts of u that no `over` change covers.
    uint64_t cur = u.start;
    while (j < over.size() && over[j].end <= cur) ++j;
    for (size_t k = j; k < over.size() && over[k].start < u.end; ++k) {
      if (over[k].start > cur) all.push_back({cur, over[k].start, u.what, u.prot});
      cur = std::max(cur, over[k].end);
    }
    if (cur < u.end) all.push_back({cur, u.end, u.what, u.prot});
  }
  all.insert(all.end(), over.begin(), over.end());
  std::sort(all.begin(), all.end(), [](const MapChange& a, const MapChange& b) { return a.start < b.start; });
  for (const MapChange& x : all) push(x);
  return out;
}

void check_invariants(const Checkpoint& c) {
  uint64_t prev_end = 0;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const Run& r = c.runs[i];
    std::string where = "run " + std::to_string(i);
    if (r.length == 0) throw Error(where + " is empty");
    if (r.address + r.length < r.address) throw Error(where + " wraps around the address space");
    if (i > 0 && r.address < prev_end) throw Error(where + " overlaps or precedes the run before it");
    if (r.offset > c.bytes.size() || r.stored() > c.bytes.size() - r.offset)
      throw Error(where + " points outside the checkpoint's bytes");
    if (r.masked()) {
      try {
        check_masked(r, c.data(r));
      } catch (const Error& e) {
        throw Error(where + ": " + e.what());
      }
    } else {
      check_reduction(r.reduction, r.length);
    }
    prev_end = r.end();
  }
  check_mappings(c.mappings);
}

}  // namespace cape::ckpt
