// Unit and property tests of the DICKPT format and its operations (ckpt/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "ckpt/format.h"
#include "ckpt/ops.h"

namespace cape::ckpt {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes random_bytes(std::mt19937_64& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// A complete image of `regions` (address, bytes).
Checkpoint image_of(std::vector<std::pair<uint64_t, Bytes>> regions) {
  Checkpoint c;
  c.kind = Kind::complete;
  for (auto& [addr, bytes] : regions) c.append(addr, bytes, 0);
  return c;
}

// `base` with a fraction `rate` of its bytes changed (whole words or single bytes).
Bytes mutate(std::mt19937_64& rng, Bytes base, double rate) {
  std::bernoulli_distribution pick(rate);
  for (size_t i = 0; i < base.size(); ++i)
    if (pick(rng)) base[i] = static_cast<uint8_t>(base[i] + 1 + rng() % 255);
  return base;
}

Checkpoint sample_delta() {
  Checkpoint c;
  c.kind = Kind::delta;
  c.node = 2;
  c.sequence = 7;
  c.timestamp = 42;
  c.load_base = 0x555555554000;
  c.name = "after";
  c.registers = Registers{Arch::x86_64, Bytes(216, 0xab)};
  Bytes a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  c.append(0x1000, a, 42);
  Bytes r(16, 0);
  int64_t v[2] = {5, -3};
  std::memcpy(r.data(), v, 16);
  c.append(0x2000, r, 43, {ReduceOp::add, ElemType::i64});
  c.append(0x3001, Bytes{0xff}, 42);
  return c;
}

TEST(Format, RoundTrip) {
  Checkpoint c = sample_delta();
  Checkpoint d = parse(serialize(c));
  EXPECT_EQ(d.kind, c.kind);
  EXPECT_EQ(d.node, 2u);
  EXPECT_EQ(d.sequence, 7u);
  EXPECT_EQ(d.timestamp, 42u);
  EXPECT_EQ(d.load_base, c.load_base);
  EXPECT_EQ(d.name, "after");
  ASSERT_TRUE(d.registers);
  EXPECT_EQ(*d.registers, *c.registers);
  ASSERT_EQ(d.runs.size(), 3u);
  EXPECT_EQ(d.bytes, c.bytes);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.runs[i].address, c.runs[i].address);
    EXPECT_EQ(d.runs[i].length, c.runs[i].length);
    EXPECT_EQ(d.runs[i].timestamp, c.runs[i].timestamp);
    EXPECT_EQ(d.runs[i].reduction, c.runs[i].reduction);
  }
}

TEST(Format, PartsAreTheFileAndDataIsNotCopied) {
  Checkpoint c = sample_delta();
  SerializedParts p = serialize_parts(c);
  EXPECT_EQ(p.data.data(), c.bytes.data());  // a view of the checkpoint's own buffer
  std::vector<uint8_t> joined(p.prefix);
  joined.insert(joined.end(), p.data.begin(), p.data.end());
  joined.insert(joined.end(), p.suffix.begin(), p.suffix.end());
  EXPECT_EQ(joined, serialize(c));
  EXPECT_EQ(joined.size(), p.size());
}

TEST(Format, BytesOutOfRunOrderAreCompactedFirst) {
  Checkpoint c;
  c.bytes = {9, 9, 1, 2, 3, 4};
  c.runs.push_back(ckpt::Run{0x10, 2, 0, {}, 4});  // data at offset 4
  c.runs.push_back(ckpt::Run{0x20, 2, 0, {}, 2});  // data at offset 2
  SerializedParts p = serialize_parts(c);
  EXPECT_EQ(std::vector<uint8_t>(p.data.begin(), p.data.end()), (std::vector<uint8_t>{3, 4, 1, 2}));
  Checkpoint d = parse(serialize(c));
  EXPECT_EQ(d.bytes, (std::vector<uint8_t>{3, 4, 1, 2}));
}

TEST(Format, ParseOfAnOwnedBufferAtAnOffset) {
  Checkpoint c = sample_delta();
  std::vector<uint8_t> buf = {7, 7, 7};  // e.g. a frame's own header before the file
  std::vector<uint8_t> f = serialize(c);
  buf.insert(buf.end(), f.begin(), f.end());
  Checkpoint d = parse(std::move(buf), 3);
  EXPECT_EQ(d.bytes, c.bytes);
  ASSERT_EQ(d.runs.size(), c.runs.size());
  EXPECT_EQ(d.runs[1].offset, c.runs[1].offset);
  std::vector<uint8_t> bad(f);
  bad[f.size() - 20] ^= 1;
  EXPECT_THROW(parse(std::move(bad), 0), Error);
  EXPECT_THROW(parse(std::vector<uint8_t>(f), f.size() + 1), Error);
}

TEST(Format, EmptyCheckpointRoundTrips) {
  Checkpoint c;
  Checkpoint d = parse(serialize(c));
  EXPECT_TRUE(d.runs.empty());
  EXPECT_FALSE(d.registers);
}

TEST(Format, FileRoundTripAndErrorsNameTheFile) {
  auto dir = std::filesystem::temp_directory_path() / ("cape-ckpt-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.dickpt").string();
  write_file(sample_delta(), path);
  EXPECT_EQ(read_file(path).bytes, sample_delta().bytes);
  try {
    read_file((dir / "missing.dickpt").string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.dickpt: cannot open"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

void expect_parse_error(std::span<const uint8_t> bytes, const std::string& needle, bool checksum = true) {
  try {
    parse(bytes, {checksum});
    ADD_FAILURE() << "parsed without error; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

TEST(Format, TruncatedAtEveryLengthIsAnError) {
  Bytes f = serialize(sample_delta());
  for (size_t n = 0; n < f.size(); ++n) {
    EXPECT_THROW(parse(std::span(f).first(n)), Error) << "length " << n;
    EXPECT_THROW(parse(std::span(f).first(n), {false}), Error) << "length " << n << " without checksum";
  }
}

TEST(Format, EveryFlippedBitIsCaught) {
  Bytes f = serialize(sample_delta());
  for (size_t i = 0; i < f.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes g = f;
      g[i] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_THROW(parse(g), Error) << "byte " << i << " bit " << bit;
      // Without the checksum the structure checks must still never crash (ASan watches).
      try {
        parse(g, {false});
      } catch (const Error&) {
      }
    }
  }
}

TEST(Format, WrongMagicAndVersion) {
  Bytes f = serialize(sample_delta());
  Bytes g = f;
  g[1] = 'X';
  expect_parse_error(g, "bad magic");
  g = f;
  g[8] = 9;
  expect_parse_error(g, "unsupported DICKPT version 9; this cape reads version 1");
}

// Rewrites a field; the tests that use it parse without the checksum to reach the
// structural checks behind it.
Bytes patch(Bytes f, size_t at, uint64_t value, size_t width) {
  std::memcpy(f.data() + at, &value, width);
  return f;
}

TEST(Format, AbsurdCountsAndLengths) {
  Bytes f = serialize(sample_delta());
  expect_parse_error(patch(f, 40, ~uint64_t{0}, 8), "run count", false);
  expect_parse_error(patch(f, 56, uint64_t{1} << 60, 8), "payload size", false);
  expect_parse_error(patch(f, 48, 100000, 4), "name length", false);
  // First run header starts after the header, the 5-byte name (padded to 8) and 216 registers.
  size_t run0 = kHeaderSize + 8 + 216;
  expect_parse_error(patch(f, run0 + 8, uint64_t{1} << 62, 8), "runs past the payload", false);
  expect_parse_error(patch(f, run0 + 8, 0, 8), "is empty", false);
  expect_parse_error(patch(f, run0, ~uint64_t{0} - 2, 8), "wraps around", false);
  expect_parse_error(patch(f, run0 + 24, 99, 1), "unknown reduction operator", false);
  expect_parse_error(patch(f, run0 + 27, 1, 1), "reserved", false);
}

TEST(Format, UnsortedOrOverlappingRunsAreRejected) {
  Bytes f = serialize(sample_delta());
  size_t run0 = kHeaderSize + 8 + 216;
  size_t run1 = run0 + kRunHeaderSize;
  expect_parse_error(patch(f, run1, 0x1004, 8), "overlaps or precedes", false);
  expect_parse_error(patch(f, run1, 0x10, 8), "overlaps or precedes", false);
}

TEST(Format, BadReductionsAreRejected) {
  Checkpoint c;
  Bytes four(4, 0);
  EXPECT_THROW(c.append(0, four, 0, {ReduceOp::bxor, ElemType::f32}), Error);
  EXPECT_THROW(c.append(0, Bytes(6, 0), 0, {ReduceOp::add, ElemType::i32}), Error);
  EXPECT_THROW(c.append(0, four, 0, {ReduceOp::add, ElemType::none}), Error);
}

TEST(Differ, FindsExactlyTheChangedWordsAndTrimsEdges) {
  Bytes old(64, 0), cur(64, 0);
  cur[3] = 1;                // inside word 0
  cur[9] = 2, cur[14] = 3;   // word 1
  cur[40] = 4;               // word 5
  Checkpoint out;
  diff_into(out, 0x1000, old, cur);
  ASSERT_EQ(out.runs.size(), 2u);
  EXPECT_EQ(out.runs[0].address, 0x1003u);  // starts at the first changed byte
  EXPECT_EQ(out.runs[0].length, 12u);       // to byte 14 inclusive, unchanged bytes inside
  EXPECT_EQ(out.runs[1].address, 0x1028u);
  EXPECT_EQ(out.runs[1].length, 1u);
}

TEST(Differ, ResultDoesNotDependOnHowMemoryIsCut) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    size_t n = 4096 * 4;
    Bytes old = random_bytes(rng, n);
    Bytes cur = mutate(rng, old, round % 2 ? 0.01 : 0.3);
    // Force changes across the page boundaries too.
    for (size_t p = 4096; p < n; p += 4096) cur[p - 1] ^= 1, cur[p] ^= 2;
    Checkpoint whole, paged;
    diff_into(whole, 0x10000, old, cur);
    Differ d(paged);
    for (size_t p = 0; p < n; p += 4096)
      d.add(0x10000 + p, std::span(old).subspan(p, 4096), std::span(cur).subspan(p, 4096));
    d.finish();
    ASSERT_EQ(whole.runs.size(), paged.runs.size());
    EXPECT_EQ(whole.bytes, paged.bytes);
    for (size_t i = 0; i < whole.runs.size(); ++i) {
      EXPECT_EQ(whole.runs[i].address, paged.runs[i].address);
      EXPECT_EQ(whole.runs[i].length, paged.runs[i].length);
    }
  }
}

TEST(Differ, UnalignedSpansAndZeroComparison) {
  Bytes cur(37, 0);
  cur[0] = 1;
  cur[36] = 9;
  Checkpoint out;
  Differ d(out);
  d.add_against_zero(0x2003, cur);
  d.finish();
  ASSERT_EQ(out.runs.size(), 2u);
  EXPECT_EQ(out.runs[0].address, 0x2003u);
  EXPECT_EQ(out.runs[0].length, 1u);
  EXPECT_EQ(out.runs[1].address, 0x2003u + 36);
}

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
    // The delta holds no unchanged word: every run's first and last byte changed.
    for (const ckpt::Run& r : delta.runs) {
      Checkpoint probe = older;
      probe.append(0x200000, Bytes(100, 0), 0);
      const ckpt::Run* reg = probe.find(r.address);
      ASSERT_NE(reg, nullptr);
      EXPECT_NE(probe.data(*reg)[r.address - reg->address], delta.data(r)[0]);
      EXPECT_NE(probe.data(*reg)[r.end() - 1 - reg->address], delta.data(r)[r.length - 1]);
    }
  }
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
  a.registers = Registers{Arch::x86_64, Bytes(8, 1)};
  b.registers = Registers{Arch::x86_64, Bytes(8, 2)};
  EXPECT_EQ(merge(a, b).merged.registers->bytes, Bytes(8, 1));
  b.timestamp = 3;
  EXPECT_EQ(merge(a, b).merged.registers->bytes, Bytes(8, 2));  // tie: the second
}

}  // namespace
}  // namespace cape::ckpt
