#include "ckpt/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <limits>
#include <type_traits>

namespace cape::ckpt {
namespace {

std::string hex(uint64_t v) { return hex_address(v); }

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// End (span index) of the word that holds span index `pos`; words are aligned to absolute
// addresses, so the first and last word of a span may be partial.
size_t word_end(uint64_t address, size_t pos, size_t n) {
  size_t in_word = static_cast<size_t>((address + pos) % kWordSize);
  return std::min(n, pos + kWordSize - in_word);
}

// First word at or after `pos` that differs, or n. The aligned middle is compared 64 bytes
// at a time (OR of XORs, vector code); an AVX2 clone is picked at load time where the CPU
// has it.
__attribute__((target_clones("avx2", "default")))
size_t skip_equal_words(uint64_t address, const uint8_t* o, const uint8_t* c, size_t pos, size_t n) {
  while (pos < n) {
    if ((address + pos) % kWordSize != 0 || n - pos < kWordSize) {
      size_t we = word_end(address, pos, n);
      if (std::memcmp(o + pos, c + pos, we - pos) != 0) return pos;
      pos = we;
      continue;
    }
    // Dense changes: the next word is often changed already; look before scanning blocks.
    if (load64(o + pos) != load64(c + pos)) return pos;
    while (n - pos >= 128) {
      uint64_t d = 0;
      for (size_t k = 0; k < 128; k += 8) d |= load64(o + pos + k) ^ load64(c + pos + k);
      if (d != 0) break;
      pos += 128;
    }
    size_t stop = pos + ((std::min(n, pos + 128) - pos) & ~size_t{7});
    for (; pos + kWordSize <= stop; pos += kWordSize)
      if (load64(o + pos) != load64(c + pos)) return pos;
  }
  return n;
}

// First word at or after `pos` that is equal, or n.
size_t skip_changed_words(uint64_t address, const uint8_t* o, const uint8_t* c, size_t pos, size_t n) {
  while (pos < n) {
    if ((address + pos) % kWordSize == 0) {
      // Aligned: four words at a time while none is equal (rewritten rows of an array),
      // then whole words until the last partial one.
      while (n - pos >= 32) {
        // Integer ORs, not ||: four compares without branches.
        int any_equal = int(load64(o + pos) == load64(c + pos)) | int(load64(o + pos + 8) == load64(c + pos + 8)) |
                        int(load64(o + pos + 16) == load64(c + pos + 16)) |
                        int(load64(o + pos + 24) == load64(c + pos + 24));
        if (any_equal) break;
        pos += 32;
      }
      for (; n - pos >= kWordSize; pos += kWordSize)
        if (load64(o + pos) == load64(c + pos)) return pos;
      if (pos == n) return n;
    }
    size_t we = word_end(address, pos, n);
    if (std::memcmp(o + pos, c + pos, we - pos) == 0) return pos;
    pos = we;
  }
  return n;
}

// Start (span index) of the word holding index `pos`, clipped to the span start.
size_t word_start(uint64_t address, size_t pos) {
  size_t in_word = static_cast<size_t>((address + pos) % kWordSize);
  return pos >= in_word ? pos - in_word : 0;
}

}  // namespace

void Differ::add(uint64_t address, std::span<const uint8_t> old, std::span<const uint8_t> cur) {
  if (old.size() != cur.size()) throw Error("diff of spans of different lengths");
  const size_t n = cur.size();
  if (n == 0) return;
  const uint8_t* o = old.data();
  const uint8_t* c = cur.data();
  if (open_ && open_end_ != address) close_open_run();

  // Records the run [b, e) of this span; leaves it open when it reaches the span's end.
  auto emit = [&](size_t b, size_t e) {
    size_t tail_start = std::max(b, word_start(address, e - 1));
    if (e == n) {
      out_.append(address + b, cur.subspan(b, e - b), timestamp_);
      open_ = true;
      open_end_ = address + n;
      tail_len_ = e - tail_start;
      std::memcpy(tail_old_, o + tail_start, tail_len_);
      return;
    }
    size_t t = e;
    if (e - tail_start == kWordSize) {
      // A whole last word: its highest differing byte from the XOR (little-endian).
      uint64_t x = load64(o + tail_start) ^ load64(c + tail_start);
      t = tail_start + kWordSize - static_cast<size_t>(__builtin_clzll(x)) / 8;
    } else {
      while (t > b && o[t - 1] == c[t - 1]) --t;  // the last word changed, so this stops in it
    }
    out_.append(address + b, cur.subspan(b, t - b), timestamp_);
  };

  size_t pos = 0;
  if (open_) {
    open_ = false;
    size_t we = word_end(address, 0, n);
    if (std::memcmp(o, c, we) != 0) {
      // The run of the previous span goes on: no head trimming here.
      size_t e = skip_changed_words(address, o, c, 0, n);
      emit(0, e);
      pos = e;
    } else {
      open_ = true;  // close the previous run with its saved tail
      close_open_run();
    }
  }
  while (pos < n) {
    pos = skip_equal_words(address, o, c, pos, n);
    if (pos >= n) break;
    size_t e = skip_changed_words(address, o, c, pos, n);
    size_t b = pos;
    if (n - pos >= kWordSize && (address + pos) % kWordSize == 0) {
      uint64_t x = load64(o + pos) ^ load64(c + pos);  // nonzero: the word changed
      b += static_cast<size_t>(__builtin_ctzll(x)) / 8;
    } else {
      while (o[b] == c[b]) ++b;  // the first word changed, so this stops in it
    }
    emit(b, e);
    pos = e;
  }
}

void Differ::add_against_zero(uint64_t address, std::span<const uint8_t> cur) {
  static const uint8_t zeros[4096] = {};
  // Cut at 4 KiB boundaries of the address: word-aligned, so the result is the same.
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
  d.add(address, old, cur);
  d.finish();
}

Checkpoint diff(const Checkpoint& older, const Checkpoint& newer) {
  check_invariants(older);
  check_invariants(newer);
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

void apply(const Checkpoint& delta, Checkpoint& image) {
  check_invariants(delta);
  // Check every run first: nothing is written unless everything fits.
  auto region_at = [&](uint64_t address) -> Run* {
    auto it = std::upper_bound(image.runs.begin(), image.runs.end(), address,
                               [](uint64_t a, const Run& r) { return a < r.address; });
    if (it == image.runs.begin()) return nullptr;
    --it;
    return address < it->end() ? &*it : nullptr;
  };
  for (const Run& r : delta.runs) {
    uint64_t pos = r.address;
    while (pos < r.end()) {
      Run* region = region_at(pos);
      if (!region) throw Error("run at " + hex(pos) + " falls outside the image");
      pos = std::min(r.end(), region->end());
    }
  }
  for (const Run& r : delta.runs) {
    uint64_t pos = r.address;
    while (pos < r.end()) {
      Run* region = region_at(pos);
      uint64_t to = std::min(r.end(), region->end());
      auto dst = image.data(*region).subspan(pos - region->address, to - pos);
      auto src = delta.data(r).subspan(pos - r.address, to - pos);
      if (r.reduction.active())
        reduce(r.reduction, dst, src);
      else
        std::memcpy(dst.data(), src.data(), src.size());
      pos = to;
    }
  }
}

namespace {

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
    m.bytes.reserve(a_.bytes.size() + b_.bytes.size());
    m.runs.reserve(a_.runs.size() + b_.runs.size());

    size_t i = 0, j = 0;
    const size_t na = a_.runs.size(), nb = b_.runs.size();
    uint64_t ua = na ? a_.runs[0].address : 0;  // start of the unconsumed part of a_.runs[i]
    uint64_t ub = nb ? b_.runs[0].address : 0;
    while (i < na && j < nb) {
      const Run& x = a_.runs[i];
      const Run& y = b_.runs[j];
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
      if (ua == x.end() && ++i < na) ua = a_.runs[i].address;
      if (ub == y.end() && ++j < nb) ub = b_.runs[j].address;
    }
    for (; i < na; ++i, ua = i < na ? a_.runs[i].address : 0) emit(a_, a_.runs[i], ua, a_.runs[i].end());
    for (; j < nb; ++j, ub = j < nb ? b_.runs[j].address : 0) emit(b_, b_.runs[j], ub, b_.runs[j].end());
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

  void emit(const Checkpoint& src, const Run& r, uint64_t from, uint64_t to) {
    check_cut(r, from, to);
    result_.merged.append(from, src.data(r).subspan(from - r.address, to - from), r.timestamp, r.reduction);
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
