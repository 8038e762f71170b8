// Applying a delta to an image and merging deltas (ckpt/ops.h): timestamps, conflicts,
// reductions.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt_test_util.h"

namespace cape::ckpt::test {
namespace {

TEST(Properties, ApplyOfDiffGivesTheNewImage) {
  std::mt19937_64 rng(1);
  for (int round = 0; round < 200; ++round) {
    double rate = std::array{0.0, 0.001, 0.05, 0.5, 1.0}[round % 5];
    size_t n1 = 8 * (1 + rng() % 600) + rng() % 8, n2 = 1 + rng() % 3000;
    Bytes a1 = random_bytes(rng, n1), a2 = random_bytes(rng, n2);
    Checkpoint older = image_of({{0x1000 + rng() % 8, a1}, {0x100000, a2}});
    Checkpoint newer = image_of({{older.runs[0].address, mutate(rng, a1, rate)},
                                 {0x100000, mutate(rng, a2, rate)},
                                 {0x200000, mutate(rng, Bytes(100, 0), rate)}});  // new region
    Checkpoint delta = diff(older, newer);
    check_invariants(delta);
    // The image to apply to has the new region too (zeros, as freshly mapped memory).
    Checkpoint target = older;
    target.append(0x200000, Bytes(100, 0), 0);
    apply(delta, target);
    ASSERT_EQ(target.bytes, newer.bytes) << "round " << round;
    // The delta holds no unchanged word: every plain run's first and last byte changed,
    // every word of a masked run changed.
    Checkpoint probe = older;
    probe.append(0x200000, Bytes(100, 0), 0);
    for (const ckpt::Run& r : delta.runs) {
      const ckpt::Run* reg = probe.find(r.address);
      ASSERT_NE(reg, nullptr);
      auto old_at = [&](uint64_t a) { return probe.data(*reg)[a - reg->address]; };
      if (!r.masked()) {
        EXPECT_NE(old_at(r.address), delta.data(r)[0]);
        EXPECT_NE(old_at(r.end() - 1), delta.data(r)[r.length - 1]);
        continue;
      }
      delta.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) {
        for (size_t w = 0; w < piece.size(); w += 8)
          EXPECT_NE(std::memcmp(probe.data(*reg).data() + (address + w - reg->address), piece.data() + w, 8), 0)
              << "unchanged word at " << address + w;
      });
    }
  }
}

// A merged complete checkpoint keeps a delta's masked runs (CAPE-1's targets): diff compares
// the words they mark as memory, not their stored bitmap (it read the bitmap as memory before
// session 14: garbage in CAPE-1's step deltas).
TEST(Properties, DiffComparesMaskedRunsAsMemory) {
  Checkpoint older = image_of({{0x1000, Bytes(64, 0)}});
  Checkpoint newer = image_of({{0x1000, Bytes(8, 0)}});  // plain, unchanged
  Bytes bitmap(mask_bytes(24), 0);
  bitmap[0] = 0b101;  // words 0 and 2 of [0x1008, 0x1020)
  Bytes words(16, 0x11);
  std::fill(words.begin() + 8, words.end(), 0x22);
  newer.append_masked(0x1008, 24, bitmap, words, 0);
  Checkpoint delta = diff(older, newer);
  check_invariants(delta);
  Checkpoint target = older;
  apply(delta, target);
  Bytes want(64, 0);
  std::fill(want.begin() + 8, want.begin() + 16, 0x11);   // word 0 of the masked run
  std::fill(want.begin() + 24, want.begin() + 32, 0x22);  // word 2
  EXPECT_EQ(target.bytes, want);
}

TEST(Apply, RefusesRunsOutsideTheImageBeforeWritingAnything) {
  Checkpoint img = image_of({{0x1000, Bytes(16, 0)}});
  Checkpoint d;
  d.append(0x1000, Bytes{1, 2}, 0);
  d.append(0x100f, Bytes{3, 4}, 0);  // one byte past the end
  EXPECT_THROW(apply(d, img), Error);
  EXPECT_EQ(img.bytes, Bytes(16, 0));
}

TEST(Apply, ReductionRunsCombineWithMemory) {
  Checkpoint img;
  img.kind = Kind::complete;
  double x = 1.5;
  Bytes b(8);
  std::memcpy(b.data(), &x, 8);
  img.append(0x1000, b, 0);
  Checkpoint d;
  double y = 2.25;
  std::memcpy(b.data(), &y, 8);
  d.append(0x1000, b, 1, {ReduceOp::add, ElemType::f64});
  apply(d, img);
  double r;
  std::memcpy(&r, img.bytes.data(), 8);
  EXPECT_EQ(r, 3.75);
}

Checkpoint delta_of(uint64_t addr, Bytes bytes, uint64_t ts) {
  Checkpoint c;
  c.timestamp = ts;
  c.append(addr, bytes, ts);
  return c;
}

TEST(Merge, DisjointDeltasAreOrderIndependent) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 100; ++round) {
    Bytes base = random_bytes(rng, 4096);
    Bytes ca = base, cb = base;
    // a writes the first half's changes, b the second's: disjoint words.
    Bytes ma = mutate(rng, base, 0.2), mb = mutate(rng, base, 0.2);
    std::copy(ma.begin(), ma.begin() + 2048, ca.begin());
    std::copy(mb.begin() + 2048, mb.end(), cb.begin() + 2048);
    Checkpoint da, db;
    diff_into(da, 0x4000, base, ca);
    diff_into(db, 0x4000, base, cb);
    MergeResult ab = merge(da, db), ba = merge(db, da);
    EXPECT_TRUE(ab.conflicts.empty());
    EXPECT_EQ(ab.merged.bytes, ba.merged.bytes);
    ASSERT_EQ(ab.merged.runs.size(), ba.merged.runs.size());
    Checkpoint img = image_of({{0x4000, base}});
    apply(ab.merged, img);
    Bytes want(ca.begin(), ca.begin() + 2048);
    want.insert(want.end(), cb.begin() + 2048, cb.end());
    EXPECT_EQ(img.bytes, want);
  }
}

TEST(Merge, LaterTimestampWins) {
  MergeResult r = merge(delta_of(0x10, {1, 1, 1, 1}, 5), delta_of(0x12, {2, 2, 2, 2}, 3));
  EXPECT_TRUE(r.conflicts.empty());
  ASSERT_EQ(r.merged.kind, Kind::merged);
  Checkpoint img = image_of({{0x10, Bytes(8, 0)}});
  apply(r.merged, img);
  EXPECT_EQ(img.bytes, (Bytes{1, 1, 1, 1, 2, 2, 0, 0}));
  EXPECT_EQ(r.merged.timestamp, 5u);
  EXPECT_EQ(r.merged.find(0x12)->timestamp, 5u);  // max of the two, Def. 4.2 eq. 1
}

TEST(Merge, SameTimestampDifferentValuesIsAConflictWithAddresses) {
  MergeResult r = merge(delta_of(0x100, {1, 2, 3, 4}, 0), delta_of(0x102, {3, 9, 9}, 0));
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(r.conflicts[0], (Conflict{0x103, 1}));
  EXPECT_EQ(r.conflict_bytes, 1u);
  MergeOptions fail;
  fail.on_conflict = OnConflict::fail;
  try {
    merge(delta_of(0x100, {1, 2, 3, 4}, 0), delta_of(0x102, {3, 9, 9}, 0), fail);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conflicting writes at 0x103"), std::string::npos) << e.what();
  }
}

TEST(Merge, BaseResolvesNeighbouringWritesInOneWord) {
  // Interleaved ints: a wrote x[0], b wrote x[1]; each run carries the other's old bytes.
  Bytes base = {9, 9, 9, 9, 9, 9, 9, 9};
  Checkpoint a = delta_of(0x40, {1, 1, 1, 1, 9, 9, 9, 7}, 0);
  Checkpoint b = delta_of(0x40, {9, 9, 9, 9, 2, 2, 2, 2}, 0);
  MergeOptions opt;
  opt.read_base = [&](uint64_t addr, std::span<uint8_t> out) {
    std::memcpy(out.data(), base.data() + (addr - 0x40), out.size());
  };
  MergeResult r = merge(a, b, opt);
  ASSERT_EQ(r.conflicts.size(), 1u);  // byte 7: both wrote different values
  EXPECT_EQ(r.conflicts[0], (Conflict{0x47, 1}));
  EXPECT_EQ(r.merged.bytes, (Bytes{1, 1, 1, 1, 2, 2, 2, 2}));
}

template <class T>
Bytes as_bytes(std::vector<T> v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::vector<T> from_bytes(std::span<const uint8_t> b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

template <class T>
void check_reduction_merge(ReduceOp op, ElemType type, std::vector<std::vector<T>> parts) {
  Reduction red{op, type};
  Checkpoint acc;
  acc.append(0x800, as_bytes(parts[0]), 1, red);
  Bytes sequential = as_bytes(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    Checkpoint p;
    p.append(0x800, as_bytes(parts[i]), i + 1, red);
    acc = merge(acc, p).merged;
    reduce(red, sequential, as_bytes(parts[i]));
  }
  ASSERT_EQ(acc.runs.size(), 1u);
  EXPECT_EQ(acc.runs[0].reduction, red);
  EXPECT_EQ(acc.bytes, sequential) << to_string(op) << " " << to_string(type);
}

TEST(Merge, ReductionsEqualTheOperatorAppliedSequentially) {
  std::vector<std::vector<int32_t>> ints = {{1, -2, 3}, {4, 5, -6}, {7, 0, 9}};
  for (ReduceOp op : {ReduceOp::add, ReduceOp::mul, ReduceOp::sub, ReduceOp::band, ReduceOp::bor,
                      ReduceOp::bxor, ReduceOp::land, ReduceOp::lor, ReduceOp::min, ReduceOp::max})
    check_reduction_merge(op, ElemType::i32, ints);
  check_reduction_merge<uint64_t>(ReduceOp::max, ElemType::u64, {{1, ~0ull}, {5, 2}});
  check_reduction_merge<double>(ReduceOp::add, ElemType::f64, {{0.5, 1e300}, {0.25, -1e300}, {1, 1}});
  check_reduction_merge<float>(ReduceOp::min, ElemType::f32, {{0.5f}, {-0.25f}, {3}});
  check_reduction_merge<int8_t>(ReduceOp::mul, ElemType::i8, {{3, -2}, {5, 7}});
  // Concrete values, so the operator itself is checked too.
  Checkpoint a, b;
  a.append(0, as_bytes<int32_t>({10}), 0, {ReduceOp::sub, ElemType::i32});
  b.append(0, as_bytes<int32_t>({-4}), 0, {ReduceOp::sub, ElemType::i32});
  EXPECT_EQ(from_bytes<int32_t>(merge(a, b).merged.bytes)[0], 6);  // '-' partials add up
}

TEST(Merge, IntegerReductionsWrapAroundWithoutUndefinedBehaviour) {
  // Found by the fuzzer: partial sums that overflow int32 (UBSan checks this under SAN=undefined).
  Checkpoint a, b;
  a.append(0, as_bytes<int32_t>({2147483647, -2147483647 - 1}), 0, {ReduceOp::add, ElemType::i32});
  b.append(0, as_bytes<int32_t>({1, -1}), 0, {ReduceOp::add, ElemType::i32});
  EXPECT_EQ(from_bytes<int32_t>(merge(a, b).merged.bytes), (std::vector<int32_t>{-2147483647 - 1, 2147483647}));
  Checkpoint c, d;
  c.append(0, as_bytes<int16_t>({30000}), 0, {ReduceOp::mul, ElemType::i16});
  d.append(0, as_bytes<int16_t>({3}), 0, {ReduceOp::mul, ElemType::i16});
  EXPECT_EQ(from_bytes<int16_t>(merge(c, d).merged.bytes)[0], static_cast<int16_t>(90000 - 65536));
}

TEST(Merge, MismatchedReductionsAreAnError) {
  Checkpoint a, b;
  a.append(0, as_bytes<int32_t>({1}), 0, {ReduceOp::add, ElemType::i32});
  b.append(0, as_bytes<int32_t>({1}), 0, {ReduceOp::mul, ElemType::i32});
  EXPECT_THROW(merge(a, b), Error);
  Checkpoint c;
  c.append(2, Bytes{1}, 0);  // cuts the int32 element in half
  EXPECT_THROW(merge(a, c), Error);
}

TEST(Merge, RegistersComeFromTheLaterCheckpoint) {
  Checkpoint a = delta_of(0, {1}, 3), b = delta_of(8, {2}, 2);
  a.registers = Registers{Arch::x86_64, std::vector<uint8_t>(8, 1)};
  b.registers = Registers{Arch::x86_64, std::vector<uint8_t>(8, 2)};
  EXPECT_EQ(merge(a, b).merged.registers->bytes, std::vector<uint8_t>(8, 1));
  b.timestamp = 3;
  EXPECT_EQ(merge(a, b).merged.registers->bytes, std::vector<uint8_t>(8, 2));  // tie: the second
}

}  // namespace
}  // namespace cape::ckpt::test
