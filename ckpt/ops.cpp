#include "ckpt/ops.h"

#include "ckpt/word_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace cape::ckpt {
namespace {

std::string hex(uint64_t v) { return hex_address(v); }

}  // namespace

void Differ::reserve(size_t span_bytes) {
  // A masked block stores at most its words and a 64-byte bitmap; plain runs at most the
  // span. A block is one masked run or at most kMaskedMinRuns - 1 plain ones (+1: a span
  // may start and end inside blocks).
  out_.bytes.reserve(out_.bytes.size() + span_bytes + span_bytes / 64 + 64 + word_scan::kPackSlack);
  out_.runs.reserve(out_.runs.size() + (span_bytes / kBlock + 2) * (kMaskedMinRuns - 1));
}

void Differ::add(uint64_t address, std::span<const uint8_t> old, std::span<const uint8_t> cur) {
  if (old.size() != cur.size()) throw Error("diff of spans of different lengths");
  const size_t n = cur.size();
  if (n == 0) return;
  const uint8_t* o = old.data();
  const uint8_t* c = cur.data();
  if (open_ && open_end_ != address) close_open_run();

  // The span as pieces that continue each other: a partial first word, whole words cut at
  // 4 KiB blocks, a partial last word.
  size_t pos = 0;
  if (size_t in_word = address % kWordSize) {
    pos = std::min(n, kWordSize - in_word);
    add_partial_word(address, o, c, pos);
  }
  while (n - pos >= kWordSize) {
    size_t to_block = kBlock - (address + pos) % kBlock;
    size_t len = std::min(to_block, (n - pos) & ~(kWordSize - 1));
    add_block(address + pos, o + pos, c + pos, len / kWordSize);
    pos += len;
  }
  if (pos < n) add_partial_word(address + pos, o + pos, c + pos, n - pos);
}

// Bytes [b, e) of the piece at `address` (n bytes) changed: append them as a plain run.
// Reaching the piece's end, the run stays open for the next adjacent piece; otherwise its
// last word is whole and is trimmed to its last changed byte.
void Differ::emit_plain(uint64_t address, const uint8_t* o, const uint8_t* c, size_t b, size_t e, size_t n) {
  size_t in_word = static_cast<size_t>((address + e - 1) % kWordSize);
  size_t word_of_last = e - 1 >= in_word ? e - 1 - in_word : 0;  // clipped to the piece
  size_t tail_start = std::max(b, word_of_last);
  if (e == n) {
    out_.append(address + b, {c + b, e - b}, timestamp_);
    open_ = true;
    open_end_ = address + n;
    tail_len_ = e - tail_start;
    std::memcpy(tail_old_, o + tail_start, tail_len_);
    return;
  }
  // The highest differing byte of the last word, from the XOR (little-endian).
  uint64_t x = load64(o + e - kWordSize) ^ load64(c + e - kWordSize);
  size_t t = e - static_cast<size_t>(__builtin_clzll(x)) / 8;
  out_.append(address + b, {c + b, t - b}, timestamp_);
}

// 1-7 bytes inside one word (the edge of an unaligned span).
void Differ::add_partial_word(uint64_t address, const uint8_t* o, const uint8_t* c, size_t n) {
  if (std::memcmp(o, c, n) == 0) {
    close_open_run();
    return;
  }
  size_t b = 0;
  if (!open_)
    while (o[b] == c[b]) ++b;  // the word changed, so this stops in it
  open_ = false;
  emit_plain(address, o, c, b, n, n);
}

// `words` whole words at a word-aligned `address`, inside one 4 KiB block.
void Differ::add_block(uint64_t address, const uint8_t* o, const uint8_t* c, size_t words) {
  uint64_t bitmap[word_scan::kBlockWords / 64];
  // After a masked block with many changed words the next one is likely the same: its
  // changed words are packed while scanning, behind room for the largest bitmap, and
  // dropped if it is not masked. (Not with a run open: closing it trims the end of the bytes.)
  // Measured on 64 MiB: 50% of random words changed 6.3-6.9 -> 5.2-6.0 ms; with 1% the
  // blocks are masked but sparse, and packing all of them cost 4.2 -> 5.5 ms.
  constexpr size_t kRoom = mask_bytes(kBlock);
  const size_t at = out_.bytes.size();
  const bool packed = dense_ && !open_;
  word_scan::Changes changes;
  if (packed) {
    out_.bytes.resize(at + kRoom + kWordSize * words + word_scan::kPackSlack);  // no zero fill (ckpt::Bytes)
    changes = word_scan::scan_and_pack(o, c, words, bitmap, out_.bytes.data() + at + kRoom);
  } else {
    changes = word_scan::changed_words(o, c, words, bitmap);
  }
  const bool masked = changes.runs >= kMaskedMinRuns;
  dense_ = masked && changes.words >= kDenseWords;
  if (!masked && packed) out_.bytes.resize(at);
  if (changes.words == 0) {
    close_open_run();
    return;
  }
  const size_t groups = (words + 63) / 64;
  const unsigned set = changes.words;
  const auto* bits = reinterpret_cast<const uint8_t*>(bitmap);

  if (masked) {
    close_open_run();  // (none is open when packed)
    const size_t start = packed ? at : out_.bytes.size();
    size_t first = next_mask_bit(bits, words, 0, true);
    if (!out_.runs.empty() && address + kWordSize * first < out_.runs.back().end()) {
      out_.bytes.resize(start);  // as before this block
      throw Error("diff spans fed out of address order");
    }
    size_t g = groups - 1;
    while (bitmap[g] == 0) --g;  // some group has a bit: words > 0
    size_t last = 64 * g + 63 - static_cast<size_t>(__builtin_clzll(bitmap[g]));
    const size_t span = last - first + 1, nbitmap = mask_bytes(kWordSize * span);
    // The bitmap shifted so that bit 0 is word `first`.
    uint64_t shifted[word_scan::kBlockWords / 64] = {};
    for (size_t k = 0; k < nbitmap / 8; ++k) {
      size_t from = first + 64 * k, w = from / 64, s = from % 64;
      uint64_t v = bitmap[w] >> s;
      if (s != 0 && w + 1 < groups) v |= bitmap[w + 1] << (64 - s);
      shifted[k] = v;
    }
    const size_t stored = nbitmap + kWordSize * set;
    if (packed) {
      uint8_t* base = out_.bytes.data() + start;
      if (nbitmap < kRoom) std::memmove(base + nbitmap, base + kRoom, kWordSize * set);
    } else {
      out_.bytes.resize(start + stored + word_scan::kPackSlack);
      word_scan::pack_words(c, words, bitmap, out_.bytes.data() + start + nbitmap);
    }
    std::memcpy(out_.bytes.data() + start, shifted, nbitmap);
    out_.bytes.resize(start + stored);
    out_.runs.push_back(Run{address + kWordSize * first, kWordSize * span, timestamp_, {}, start, set});
    return;
  }

  const size_t n = kWordSize * words;
  size_t i = next_mask_bit(bits, words, 0, true);
  if (i != 0) close_open_run();
  while (i < words) {
    size_t e = next_mask_bit(bits, words, i, false);
    size_t b = kWordSize * i;
    if (open_)
      open_ = false;  // the run of the previous piece goes on: no head trimming
    else
      b += static_cast<size_t>(__builtin_ctzll(load64(o + b) ^ load64(c + b))) / 8;
    emit_plain(address, o, c, b, kWordSize * e, n);
    i = next_mask_bit(bits, words, e, true);
  }
}

void Differ::add_against_zero(uint64_t address, std::span<const uint8_t> cur) {
  static const uint8_t zeros[kBlock] = {};
  // Cut at 4 KiB boundaries of the address, as add() cuts blocks: the result is the same.
  size_t pos = 0;
  while (pos < cur.size()) {
    size_t len = std::min(cur.size() - pos, sizeof zeros - static_cast<size_t>((address + pos) % sizeof zeros));
    add(address + pos, {zeros, len}, cur.subspan(pos, len));
    pos += len;
  }
}

void Differ::close_open_run() {
  if (!open_) return;
  open_ = false;
  Run& last = out_.runs.back();
  size_t k = 0;  // trailing unchanged bytes of the last word
  const uint8_t* now = out_.bytes.data() + out_.bytes.size() - tail_len_;
  while (k < tail_len_ && now[tail_len_ - 1 - k] == tail_old_[tail_len_ - 1 - k]) ++k;
  last.length -= k;
  out_.bytes.resize(out_.bytes.size() - k);
}

void Differ::finish() { close_open_run(); }

void diff_into(Checkpoint& out, uint64_t address, std::span<const uint8_t> old,
               std::span<const uint8_t> cur, uint64_t timestamp) {
  Differ d(out, timestamp);
  d.reserve(cur.size());
  d.add(address, old, cur);
  d.finish();
}

namespace {

// `c` with each masked run as plain pieces of the words it marks: diff() compares stored bytes
// as memory, and a masked run stores a bitmap and the marked words (a merged complete
// checkpoint keeps a delta's masked runs: CAPE-1's targets).
const Checkpoint& plain_runs(const Checkpoint& c, std::optional<Checkpoint>& copy) {
  if (std::none_of(c.runs.begin(), c.runs.end(), [](const Run& r) { return r.masked(); })) return c;
  Checkpoint& p = copy.emplace(c.header());
  for (const Run& r : c.runs)
    c.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) { p.append(a, b, r.timestamp, r.reduction); });
  return p;
}

}  // namespace

Checkpoint diff(const Checkpoint& older_in, const Checkpoint& newer_in) {
  check_invariants(older_in);
  check_invariants(newer_in);
  std::optional<Checkpoint> older_plain, newer_plain;
  const Checkpoint& older = plain_runs(older_in, older_plain);
  const Checkpoint& newer = plain_runs(newer_in, newer_plain);
  Checkpoint out;
  out.kind = Kind::delta;
  out.node = newer.node;
  out.sequence = newer.sequence;
  out.timestamp = newer.timestamp;
  out.load_base = newer.load_base;
  out.name = newer.name;
  out.registers = newer.registers;
  Differ d(out, newer.timestamp);
  for (const Run& region : newer.runs) {
    // The part of `region` that an older region covers is compared with it; the rest with zeros.
    uint64_t pos = region.address;
    auto cur = newer.data(region);
    for (const Run& o : older.runs) {
      if (o.end() <= pos || o.address >= region.end()) continue;
      uint64_t from = std::max(pos, o.address);
      uint64_t to = std::min(region.end(), o.end());
      if (from > pos) d.add_against_zero(pos, cur.subspan(pos - region.address, from - pos));
      d.add(from, older.data(o).subspan(from - o.address, to - from),
            cur.subspan(from - region.address, to - from));
      pos = to;
    }
    if (pos < region.end()) d.add_against_zero(pos, cur.subspan(pos - region.address));
  }
  d.finish();
  return out;
}

namespace {

// Integer + and * wrap around (computed in the unsigned type: signed overflow would be
// undefined behaviour here, and a partial sum that overflows wraps on real hardware too).
template <class T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
T mul_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // unsigned int, not a narrower type: uint8_t/uint16_t would be promoted to int again.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <class T>
T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::add:
    case ReduceOp::sub: return add_wrapping(a, b);  // OpenMP combines '-' partials with +
    case ReduceOp::mul: return mul_wrapping(a, b);
    case ReduceOp::land: return static_cast<T>((a != T{}) && (b != T{}));
    case ReduceOp::lor: return static_cast<T>((a != T{}) || (b != T{}));
    case ReduceOp::min: return b < a ? b : a;
    case ReduceOp::max: return b > a ? b : a;
    case ReduceOp::band:
    case ReduceOp::bor:
    case ReduceOp::bxor:
      if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::band) return static_cast<T>(a & b);
        if (op == ReduceOp::bor) return static_cast<T>(a | b);
        return static_cast<T>(a ^ b);
      }
      break;
    case ReduceOp::none: break;
  }
  throw Error("invalid reduction");
}

template <class T>
void reduce_as(ReduceOp op, std::span<uint8_t> dst, std::span<const uint8_t> src) {
  for (size_t i = 0; i + sizeof(T) <= dst.size(); i += sizeof(T)) {
    T a, b;
    std::memcpy(&a, dst.data() + i, sizeof a);
    std::memcpy(&b, src.data() + i, sizeof b);
    a = combine(op, a, b);
    std::memcpy(dst.data() + i, &a, sizeof a);
  }
}

}  // namespace

void reduce(Reduction r, std::span<uint8_t> dst, std::span<const uint8_t> src) {
  if (dst.size() != src.size()) throw Error("reduction over spans of different lengths");
  check_reduction(r, dst.size());
  if (!r.active()) throw Error("reduce() without an operator");
  switch (r.type) {
    case ElemType::i8: return reduce_as<int8_t>(r.op, dst, src);
    case ElemType::u8: return reduce_as<uint8_t>(r.op, dst, src);
    case ElemType::i16: return reduce_as<int16_t>(r.op, dst, src);
    case ElemType::u16: return reduce_as<uint16_t>(r.op, dst, src);
    case ElemType::i32: return reduce_as<int32_t>(r.op, dst, src);
    case ElemType::u32: return reduce_as<uint32_t>(r.op, dst, src);
    case ElemType::i64: return reduce_as<int64_t>(r.op, dst, src);
    case ElemType::u64: return reduce_as<uint64_t>(r.op, dst, src);
    case ElemType::f32: return reduce_as<float>(r.op, dst, src);
    case ElemType::f64: return reduce_as<double>(r.op, dst, src);
    case ElemType::none: break;
  }
  throw Error("invalid reduction element type");
}

namespace {

template <typename T>
T identity_of(ReduceOp op) {
  using L = std::numeric_limits<T>;
  switch (op) {
    case ReduceOp::mul: case ReduceOp::land: return T(1);
    case ReduceOp::band: return static_cast<T>(~uint64_t{0});
    case ReduceOp::min: return L::has_infinity ? L::infinity() : L::max();
    case ReduceOp::max: return L::has_infinity ? -L::infinity() : L::lowest();
    default: return T(0);  // + - | ^ ||
  }
}

template <typename T>
void fill_identity(ReduceOp op, std::vector<uint8_t>& out) {
  T v = identity_of<T>(op);
  for (size_t i = 0; i + sizeof(T) <= out.size(); i += sizeof(T)) std::memcpy(out.data() + i, &v, sizeof(T));
}

}  // namespace

std::vector<uint8_t> reduction_identity(Reduction r, uint64_t size) {
  std::vector<uint8_t> out(size);
  switch (r.type) {
    case ElemType::i8: fill_identity<int8_t>(r.op, out); break;
    case ElemType::u8: fill_identity<uint8_t>(r.op, out); break;
    case ElemType::i16: fill_identity<int16_t>(r.op, out); break;
    case ElemType::u16: fill_identity<uint16_t>(r.op, out); break;
    case ElemType::i32: fill_identity<int32_t>(r.op, out); break;
    case ElemType::u32: fill_identity<uint32_t>(r.op, out); break;
    case ElemType::i64: fill_identity<int64_t>(r.op, out); break;
    case ElemType::u64: fill_identity<uint64_t>(r.op, out); break;
    case ElemType::f32: fill_identity<float>(r.op, out); break;
    case ElemType::f64: fill_identity<double>(r.op, out); break;
    case ElemType::none: break;
  }
  return out;
}

void apply(const Checkpoint& delta, Checkpoint& image) {
  check_invariants(delta);
  // Check every run first: nothing is written unless everything fits.
  auto region_at = [&](uint64_t address) -> Run* {
    auto it = std::upper_bound(image.runs.begin(), image.runs.end(), address,
                               [](uint64_t a, const Run& r) { return a < r.address; });
    if (it == image.runs.begin()) return nullptr;
    --it;
    return address < it->end() && !it->masked() ? &*it : nullptr;
  };
  for (const Run& r : delta.runs) {
    uint64_t pos = r.address;
    while (pos < r.end()) {
      Run* region = region_at(pos);
      if (!region) throw Error("run at " + hex(pos) + " falls outside the image");
      pos = std::min(r.end(), region->end());
    }
  }
  // Plain bytes at `address`, across as many adjacent regions as they cover.
  auto write = [&](uint64_t address, std::span<const uint8_t> src, Reduction red) {
    uint64_t pos = address, end = address + src.size();
    while (pos < end) {
      Run* region = region_at(pos);
      uint64_t to = std::min(end, region->end());
      auto dst = image.data(*region).subspan(pos - region->address, to - pos);
      auto part = src.subspan(pos - address, to - pos);
      if (red.active())
        reduce(red, dst, part);
      else
        std::memcpy(dst.data(), part.data(), part.size());
      pos = to;
    }
  };
  for (const Run& r : delta.runs) {
    if (!r.masked()) {
      write(r.address, delta.data(r), r.reduction);
      continue;
    }
    Run* region = region_at(r.address);
    if (r.end() > region->end()) {  // the span crosses into the next region
      delta.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) { write(address, piece, {}); });
      continue;
    }
    // Word by word from the bitmap: no per-piece bookkeeping.
    uint8_t* dst = image.data(*region).data() + (r.address - region->address);
    const uint8_t* bits = delta.bytes.data() + r.offset;
    const uint8_t* word = bits + mask_bytes(r.length);
    for (size_t g = 0; g < mask_bytes(r.length) / 8; ++g)
      for (uint64_t m = load64(bits + 8 * g); m != 0; m &= m - 1) {
        std::memcpy(dst + kWordSize * (64 * g + static_cast<size_t>(__builtin_ctzll(m))), word, kWordSize);
        word += kWordSize;
      }
  }
}

namespace {

// The map after both checkpoints: the later one's changes laid over the earlier one's. Two
// checkpoints of one time (two nodes' parts of one region) that change the same pages
// differently cannot both be replayed: that is an error, not a conflict to list.
std::vector<MapChange> merge_mappings(const Checkpoint& earlier, const Checkpoint& later) {
  if (earlier.mappings.empty()) return later.mappings;
  if (later.mappings.empty()) return earlier.mappings;
  if (earlier.timestamp == later.timestamp) {
    size_t j = 0;
    for (const MapChange& x : earlier.mappings) {
      while (j < later.mappings.size() && later.mappings[j].end <= x.start) ++j;
      for (size_t k = j; k < later.mappings.size() && later.mappings[k].start < x.end; ++k)
        if (!later.mappings[k].same_state(x)) {
          const MapChange& y = later.mappings[k];
          throw Error("nodes " + std::to_string(earlier.node) + " and " + std::to_string(later.node) +
                      " changed the memory map differently at the same time: " + hex_address(std::max(x.start, y.start)) +
                      " is " + to_string(x.what) + " " + prot_string(x.prot) + " on one and " + to_string(y.what) + " " +
                      prot_string(y.prot) + " on the other");
        }
    }
  }
  return overlay_mappings(earlier.mappings, later.mappings);
}

class Merger {
 public:
  Merger(const Checkpoint& a, const Checkpoint& b, const MergeOptions& opt) : a_(a), b_(b), opt_(opt) {}

  MergeResult run() {
    check_invariants(a_);
    check_invariants(b_);
    Checkpoint& m = result_.merged;
    m.kind = Kind::merged;
    m.node = a_.node;
    m.sequence = a_.sequence;
    m.name = a_.name;
    m.timestamp = std::max(a_.timestamp, b_.timestamp);
    m.load_base = a_.load_base ? a_.load_base : b_.load_base;
    const Checkpoint& later = a_.timestamp > b_.timestamp ? a_ : b_;
    const Checkpoint& earlier = &later == &a_ ? b_ : a_;
    m.registers = later.registers ? later.registers : earlier.registers;
    m.mappings = merge_mappings(earlier, later);
    m.bytes.reserve(a_.data_bytes() + b_.data_bytes());
    m.runs.reserve(a_.runs.size() + b_.runs.size());

    // Masked runs that meet the other side are walked as their pieces; the others are
    // copied whole.
    Runs ea, eb;
    const Runs& ra = expand_overlapping(a_, b_, ea);
    const Runs& rb = expand_overlapping(b_, a_, eb);

    size_t i = 0, j = 0;
    const size_t na = ra.size(), nb = rb.size();
    uint64_t ua = na ? ra[0].address : 0;  // start of the unconsumed part of ra[i]
    uint64_t ub = nb ? rb[0].address : 0;
    while (i < na && j < nb) {
      const Run& x = ra[i];
      const Run& y = rb[j];
      if (ua < ub) {
        uint64_t to = std::min(x.end(), ub);
        emit(a_, x, ua, to);
        ua = to;
      } else if (ub < ua) {
        uint64_t to = std::min(y.end(), ua);
        emit(b_, y, ub, to);
        ub = to;
      } else {
        uint64_t to = std::min(x.end(), y.end());
        both(x, y, ua, to);
        ua = ub = to;
      }
      if (ua == x.end() && ++i < na) ua = ra[i].address;
      if (ub == y.end() && ++j < nb) ub = rb[j].address;
    }
    for (; i < na; ++i, ua = i < na ? ra[i].address : 0) emit(a_, ra[i], ua, ra[i].end());
    for (; j < nb; ++j, ub = j < nb ? rb[j].address : 0) emit(b_, rb[j], ub, rb[j].end());
    return std::move(result_);
  }

 private:
  // Reduction runs may only be cut at element boundaries.
  static void check_cut(const Run& r, uint64_t from, uint64_t to) {
    if (!r.reduction.active()) return;
    size_t es = element_size(r.reduction.type);
    if ((from - r.address) % es != 0 || (to - r.address) % es != 0)
      throw Error("reduction run at " + hex(r.address) + " is overlapped off its element boundaries");
  }

  // The runs of `c`, with each masked run that meets a run of `other` replaced by its
  // pieces (plain runs over the same stored bytes), so that the walk cuts plain runs only.
  // Without such a run, c.runs itself.
  static const Runs& expand_overlapping(const Checkpoint& c, const Checkpoint& other,
                                         Runs& storage) {
    auto meets = [&](size_t& j, const Run& x) {
      while (j < other.runs.size() && other.runs[j].end() <= x.address) ++j;
      return j < other.runs.size() && other.runs[j].address < x.end();
    };
    size_t j = 0, first = c.runs.size();
    for (size_t i = 0; i < c.runs.size() && first == c.runs.size(); ++i)
      if (c.runs[i].masked() && meets(j, c.runs[i])) first = i;
    if (first == c.runs.size()) return c.runs;
    storage.assign(c.runs.begin(), c.runs.begin() + static_cast<std::ptrdiff_t>(first));
    j = 0;
    for (size_t i = first; i < c.runs.size(); ++i) {
      const Run& x = c.runs[i];
      if (!x.masked() || !meets(j, x)) {
        storage.push_back(x);
        continue;
      }
      c.for_each_piece(x, [&](uint64_t address, std::span<const uint8_t> piece) {
        storage.push_back(Run{address, piece.size(), x.timestamp, {}, static_cast<uint64_t>(piece.data() - c.bytes.data())});
      });
    }
    return storage;
  }

  void emit(const Checkpoint& src, const Run& r, uint64_t from, uint64_t to) {
    check_cut(r, from, to);
    result_.merged.append_from(src, r, from, to);
  }

  void both(const Run& x, const Run& y, uint64_t from, uint64_t to) {
    auto xs = a_.data(x).subspan(from - x.address, to - from);
    auto ys = b_.data(y).subspan(from - y.address, to - from);
    uint64_t ts = std::max(x.timestamp, y.timestamp);
    if (x.reduction.active() || y.reduction.active()) {
      // Def. 4.2 eq. 1: the operator combines the values, the later timestamp is kept.
      if (x.reduction != y.reduction)
        throw Error("address " + hex(from) + " is reduced with " + to_string(x.reduction.op) + "/" +
                    to_string(x.reduction.type) + " in one checkpoint and " + to_string(y.reduction.op) + "/" +
                    to_string(y.reduction.type) + " in the other");
      check_cut(x, from, to);
      check_cut(y, from, to);
      scratch_.assign(xs.begin(), xs.end());
      reduce(x.reduction, scratch_, ys);
      result_.merged.append(from, scratch_, ts, x.reduction);
      return;
    }
    // Def. 4.2 eq. 2: the later timestamp wins.
    if (x.timestamp != y.timestamp) {
      result_.merged.append(from, x.timestamp > y.timestamp ? xs : ys, ts);
      return;
    }
    if (std::memcmp(xs.data(), ys.data(), xs.size()) == 0) {
      result_.merged.append(from, xs, ts);
      return;
    }
    // Same time, different bytes: resolve against the base where we have it; the rest are
    // Bernstein violations.
    scratch_.assign(ys.begin(), ys.end());
    std::vector<uint8_t> base;
    if (opt_.read_base) {
      base.resize(xs.size());
      opt_.read_base(from, base);
    }
    uint64_t conflict_start = 0, conflict_len = 0;
    auto flush = [&] {
      if (conflict_len == 0) return;
      if (opt_.on_conflict == OnConflict::fail)
        throw Error("conflicting writes at " + hex(conflict_start) + " (" + std::to_string(conflict_len) +
                    " bytes): both checkpoints changed it to different values");
      result_.conflict_bytes += conflict_len;
      auto& list = result_.conflicts;
      if (!list.empty() && list.back().address + list.back().length == conflict_start)
        list.back().length += conflict_len;
      else if (list.size() < opt_.max_conflicts)
        list.push_back({conflict_start, conflict_len});
      conflict_len = 0;
    };
    for (size_t k = 0; k < xs.size(); ++k) {
      if (xs[k] == ys[k]) {
        flush();
        continue;
      }
      if (!base.empty() && ys[k] == base[k]) {
        scratch_[k] = xs[k];  // only a wrote it
        flush();
        continue;
      }
      if (!base.empty() && xs[k] == base[k]) {
        flush();  // only b wrote it; scratch already has it
        continue;
      }
      if (conflict_len == 0) conflict_start = from + k;
      ++conflict_len;
    }
    flush();
    result_.merged.append(from, scratch_, ts);
  }

  const Checkpoint& a_;
  const Checkpoint& b_;
  const MergeOptions& opt_;
  MergeResult result_;
  std::vector<uint8_t> scratch_;
};

}  // namespace

MergeResult merge(const Checkpoint& a, const Checkpoint& b, const MergeOptions& options) {
  return Merger(a, b, options).run();
}

}  // namespace cape::ckpt
