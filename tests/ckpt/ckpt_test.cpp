// Unit and property tests of the DICKPT format and its operations (ckpt/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/hash.h"
#include "ckpt/word_scan.h"

#include <xxhash.h>

namespace cape::ckpt {
namespace {

using File = std::vector<uint8_t>;  // serialize()'s output; checkpoints hold ckpt::Bytes

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
  c.registers = Registers{Arch::x86_64, std::vector<uint8_t>(216, 0xab)};
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
  EXPECT_EQ(d.bytes, (Bytes{3, 4, 1, 2}));
}

TEST(Format, ParseOfAnOwnedBufferAtAnOffsetKeepsTheBuffer) {
  Checkpoint c = sample_delta();
  Bytes buf = {7, 7, 7};  // e.g. a frame's own header before the file
  std::vector<uint8_t> f = serialize(c);
  buf.insert(buf.end(), f.begin(), f.end());
  const uint8_t* where = buf.data();
  Checkpoint d = parse(std::move(buf), 3);
  EXPECT_EQ(d.bytes.data(), where);  // the buffer itself, nothing copied or moved
  ASSERT_EQ(d.runs.size(), c.runs.size());
  for (size_t i = 0; i < c.runs.size(); ++i) {
    auto got = d.data(d.runs[i]), want = c.data(c.runs[i]);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << "run " << i;
  }
  EXPECT_EQ(serialize(d), f);  // its data block is sent from where it lies
  Bytes bad(f.begin(), f.end());
  bad[f.size() - 20] ^= 1;
  EXPECT_THROW(parse(std::move(bad), 0), Error);
  EXPECT_THROW(parse(Bytes(f.begin(), f.end()), f.size() + 1), Error);
}

TEST(Format, WithoutChecksumTheTrailerIsZero) {
  Checkpoint c = sample_delta();
  SerializedParts p = serialize_parts(c, {.checksum = false});
  uint64_t sum;
  std::memcpy(&sum, p.suffix.data() + p.suffix.size() - 8, 8);
  EXPECT_EQ(sum, 0u);
  std::vector<uint8_t> joined(p.prefix);
  joined.insert(joined.end(), p.data.begin(), p.data.end());
  joined.insert(joined.end(), p.suffix.begin(), p.suffix.end());
  EXPECT_THROW(parse(joined), Error);  // a file needs its checksum
  EXPECT_EQ(parse(joined, {.verify_checksum = false}).data_bytes(), c.data_bytes());
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
  File f = serialize(sample_delta());
  for (size_t n = 0; n < f.size(); ++n) {
    EXPECT_THROW(parse(std::span(f).first(n)), Error) << "length " << n;
    EXPECT_THROW(parse(std::span(f).first(n), {false}), Error) << "length " << n << " without checksum";
  }
}

TEST(Format, EveryFlippedBitIsCaught) {
  File f = serialize(sample_delta());
  for (size_t i = 0; i < f.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      File g = f;
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
  File f = serialize(sample_delta());
  File g = f;
  g[1] = 'X';
  expect_parse_error(g, "bad magic");
  g = f;
  g[8] = 9;
  expect_parse_error(g, "unsupported DICKPT version 9; this cape reads versions 1 to 3");
  g[8] = 0;
  expect_parse_error(g, "unsupported DICKPT version 0");
}

// Rewrites a field; the tests that use it parse without the checksum to reach the
// structural checks behind it.
File patch(File f, size_t at, uint64_t value, size_t width) {
  std::memcpy(f.data() + at, &value, width);
  return f;
}

TEST(Format, AbsurdCountsAndLengths) {
  File f = serialize(sample_delta());
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
  expect_parse_error(patch(f, run0 + 26, 2, 1), "unknown flags", false);
  expect_parse_error(patch(f, run0 + 26, 1, 1), "masked in a version 1 file", false);
}

TEST(Format, UnsortedOrOverlappingRunsAreRejected) {
  File f = serialize(sample_delta());
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

// ---- masked runs ---------------------------------------------------------------------

uint64_t word(const Bytes& b, size_t i) {
  uint64_t v;
  std::memcpy(&v, b.data() + 8 * i, 8);
  return v;
}

// One page with every other word changed: 256 runs of one word as plain runs, one masked run.
TEST(Masked, ScatteredChangesInAPageBecomeOneMaskedRun) {
  std::mt19937_64 rng(11);
  Bytes old = random_bytes(rng, 4096), cur = old;
  for (size_t i = 2; i < 510; i += 2) cur[8 * i + 3] ^= 0x40;  // words 2, 4, ..., 508
  Checkpoint out;
  diff_into(out, 0x10000, old, cur, 7);
  ASSERT_EQ(out.runs.size(), 1u);
  const ckpt::Run& r = out.runs[0];
  EXPECT_TRUE(r.masked());
  EXPECT_EQ(r.address, 0x10000u + 16);          // tight: first changed word
  EXPECT_EQ(r.end(), 0x10000u + 8 * 509);       // to the last changed word
  EXPECT_EQ(r.masked_words, 254u);
  EXPECT_EQ(r.timestamp, 7u);
  EXPECT_EQ(r.stored(), mask_bytes(r.length) + 8 * 254);
  size_t pieces = 0;
  out.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) {
    ASSERT_EQ(piece.size(), 8u);
    size_t i = (address - 0x10000) / 8;
    EXPECT_EQ(i, 2 + 2 * pieces);
    EXPECT_EQ(std::memcmp(piece.data(), cur.data() + 8 * i, 8), 0);
    ++pieces;
  });
  EXPECT_EQ(pieces, 254u);
  EXPECT_LT(out.data_bytes(), 254u * (8 + kRunHeaderSize));  // smaller than 254 plain runs
}

TEST(Masked, FewRunsStayPlainAndTrimmed) {
  Bytes old(4096, 0);
  for (unsigned runs = 1; runs <= 6; ++runs) {
    Bytes cur = old;
    for (unsigned k = 0; k < runs; ++k) cur[8 * (40 * k + 5) + 2] = 1;  // one byte in far-apart words
    Checkpoint out;
    diff_into(out, 0x20000, old, cur);
    if (runs < Differ::kMaskedMinRuns) {
      ASSERT_EQ(out.runs.size(), runs);
      for (const ckpt::Run& r : out.runs) EXPECT_FALSE(r.masked());
      EXPECT_EQ(out.runs[0].address, 0x20000u + 8 * 5 + 2);  // trimmed to the changed byte
      EXPECT_EQ(out.runs[0].length, 1u);
    } else {
      ASSERT_EQ(out.runs.size(), 1u) << runs;
      EXPECT_TRUE(out.runs[0].masked());
      EXPECT_EQ(out.runs[0].masked_words, runs);
    }
  }
}

// Blocks are aligned to the address, so spans cut at any 4 KiB boundary give the same runs;
// cut anywhere else they still write the same memory.
TEST(Masked, SameMemoryWhereverSpansAreCut) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 60; ++round) {
    size_t n = 4096 * 3 + 8 * (rng() % 300) + rng() % 8;
    uint64_t at = 0x40000 + 8 * (rng() % 100) + (round % 3 ? 0 : rng() % 8);
    Bytes old = random_bytes(rng, n);
    Bytes cur = mutate(rng, old, std::array{0.002, 0.02, 0.1, 0.6}[round % 4]);
    Checkpoint whole, cut;
    diff_into(whole, at, old, cur);
    Differ d(cut);
    for (size_t p = 0; p < n;) {
      size_t len = std::min(n - p, 1 + rng() % 3000);
      d.add(at + p, std::span(old).subspan(p, len), std::span(cur).subspan(p, len));
      p += len;
    }
    d.finish();
    check_invariants(whole);
    check_invariants(cut);
    for (const Checkpoint* c : {&whole, &cut}) {
      Checkpoint img = image_of({{at, old}});
      apply(*c, img);
      ASSERT_EQ(img.bytes, cur) << "round " << round;
    }
  }
}

// Every vector version the CPU runs gives what the scalar version gives, and both what a
// word-by-word look says.
TEST(Masked, VectorAndScalarScansAgree) {
  using word_scan::Isa;
  std::vector<Isa> isas = {Isa::portable};
  if (word_scan::best_isa() == Isa::avx2) isas.push_back(Isa::avx2);
  std::mt19937_64 rng(9);
  for (int round = 0; round < 400; ++round) {
    size_t n = 1 + rng() % word_scan::kBlockWords;
    Bytes old = random_bytes(rng, 8 * n), cur = old;
    double rate = std::array{0.0, 0.01, 0.3, 0.9, 1.0}[round % 5];
    std::bernoulli_distribution pick(rate);
    for (size_t i = 0; i < n; ++i)
      if (pick(rng)) cur[8 * i + rng() % 8] ^= 0x11;
    unsigned set = 0, runs = 0;
    for (size_t i = 0; i < n; ++i)
      if (word(old, i) != word(cur, i)) {
        ++set;
        runs += i == 0 || word(old, i - 1) == word(cur, i - 1);
      }
    for (Isa isa : isas) {
      SCOPED_TRACE("isa " + std::to_string(static_cast<int>(isa)) + ", n " + std::to_string(n));
      uint64_t bitmap[8] = {};
      word_scan::Changes c = word_scan::changed_words(isa, old.data(), cur.data(), n, bitmap);
      EXPECT_EQ(c.words, set);
      EXPECT_EQ(c.runs, runs);
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ((bitmap[i / 64] >> (i % 64)) & 1, uint64_t{word(old, i) != word(cur, i)}) << "word " << i;
      for (size_t i = n; i % 64 != 0; ++i) EXPECT_EQ((bitmap[i / 64] >> (i % 64)) & 1, 0u) << "bit past n";
      std::vector<uint8_t> packed(8 * n + word_scan::kPackSlack), fused(packed.size());
      ASSERT_EQ(word_scan::pack_words(isa, cur.data(), n, bitmap, packed.data()), 8 * set);
      uint64_t bitmap2[8] = {};
      word_scan::Changes c2 = word_scan::scan_and_pack(isa, old.data(), cur.data(), n, bitmap2, fused.data());
      EXPECT_EQ(c2.words, set);
      EXPECT_EQ(c2.runs, runs);
      EXPECT_EQ(0, std::memcmp(bitmap, bitmap2, sizeof bitmap));
      EXPECT_EQ(0, std::memcmp(packed.data(), fused.data(), 8 * set));
      size_t k = 0;
      for (size_t i = 0; i < n; ++i) {
        if (word(old, i) == word(cur, i)) continue;
        EXPECT_EQ(std::memcmp(packed.data() + 8 * k++, cur.data() + 8 * i, 8), 0);
      }
    }
  }
}

Checkpoint sample_masked() {
  Checkpoint c;
  c.name = "masked";
  c.timestamp = 3;
  c.append(0x800, Bytes{1, 2, 3}, 3);
  uint64_t bitmap = 0b1011001;  // words 0, 3, 4, 6 of 7
  Bytes words(32);
  for (size_t i = 0; i < 32; ++i) words[i] = static_cast<uint8_t>(0xa0 + i);
  c.append_masked(0x1000, 56, {reinterpret_cast<const uint8_t*>(&bitmap), 8}, words, 3);
  c.append(0x1038, Bytes{9}, 3);
  return c;
}

TEST(Masked, FileRoundTripIsVersion2AndPlainFilesStayVersion1) {
  Checkpoint c = sample_masked();
  File f = serialize(c);
  uint16_t version;
  std::memcpy(&version, f.data() + 8, 2);
  EXPECT_EQ(version, 2);
  std::memcpy(&version, serialize(sample_delta()).data() + 8, 2);
  EXPECT_EQ(version, 1);
  Checkpoint d = parse(f);
  ASSERT_EQ(d.runs.size(), 3u);
  EXPECT_TRUE(d.runs[1].masked());
  EXPECT_EQ(d.runs[1].masked_words, 4u);
  EXPECT_EQ(d.bytes, c.bytes);
  EXPECT_EQ(d.memory_bytes(), 3u + 32 + 1);
  Checkpoint img = image_of({{0x800, Bytes(0x900, 0)}});
  apply(d, img);
  EXPECT_EQ(img.bytes[0x800 + 3 * 8], 0xa8);  // word 3 is the second stored word
  EXPECT_EQ(img.bytes[0x800 + 8], 0);         // word 1 is not in the run
  EXPECT_EQ(img.bytes[0x838 - 0x800 + 0x800], 9);
}

TEST(Masked, CorruptMaskedRunsAreRejected) {
  File f = serialize(sample_masked());
  for (size_t n = 0; n < f.size(); ++n) EXPECT_THROW(parse(std::span(f).first(n), {false}), Error) << n;
  for (size_t i = 0; i < f.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      File g = f;
      g[i] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_THROW(parse(g), Error);
      try {
        Checkpoint c = parse(g, {false});
        check_invariants(c);  // what parses without the checksum is still well formed
      } catch (const Error&) {
      }
    }
  size_t run1 = kHeaderSize + 8 + kRunHeaderSize;  // name "masked" padded to 8
  size_t data = kHeaderSize + 8 + 3 * kRunHeaderSize;
  expect_parse_error(patch(f, run1 + 8, 57, 8), "whole words", false);
  expect_parse_error(patch(f, run1 + 8, 8192, 8), "at most 4096", false);
  expect_parse_error(patch(f, run1 + 24, 1, 1), "reduction", false);
  expect_parse_error(patch(f, data + 3, 0b1011000, 1), "first and last words", false);  // word 0 unset
  expect_parse_error(patch(f, data + 3, 0b11010001, 1), "bits past its 7 words", false);  // word 3 moved to bit 7
}

TEST(Masked, AppendFromCutsMaskedRunsIntoPlainPieces) {
  Checkpoint c = sample_masked(), out;
  const ckpt::Run& m = c.runs[1];
  out.append_from(c, m, 0x1000 + 20, 0x1000 + 52);  // from inside word 2 to inside word 6
  ASSERT_EQ(out.runs.size(), 2u);
  EXPECT_FALSE(out.runs[0].masked());
  EXPECT_EQ(out.runs[0].address, 0x1018u);  // words 3-4
  EXPECT_EQ(out.runs[0].length, 16u);
  EXPECT_EQ(out.runs[1].address, 0x1030u);  // word 6, cut at byte 52
  EXPECT_EQ(out.runs[1].length, 4u);
  EXPECT_EQ(out.data(out.runs[1])[0], 0xa0 + 24);
  Checkpoint whole;
  whole.append_from(c, m, 0, ~uint64_t{0});
  ASSERT_EQ(whole.runs.size(), 1u);
  EXPECT_TRUE(whole.runs[0].masked());
}

// Two nodes writing interleaved words of the same pages (a cyclic schedule): both deltas are
// masked over the same spans, so the merge walks them word by word.
TEST(Masked, MergeOfInterleavedMaskedRunsIsExact) {
  std::mt19937_64 rng(21);
  Bytes base = random_bytes(rng, 3 * 4096), ca = base, cb = base;
  for (size_t i = 0; i < base.size() / 8; ++i) {
    if (i % 3 == 0) ca[8 * i] ^= 1;
    if (i % 3 == 1) cb[8 * i + 7] ^= 2;
  }
  Checkpoint da, db;
  diff_into(da, 0x8000, base, ca, 1);
  diff_into(db, 0x8000, base, cb, 1);
  ASSERT_TRUE(da.runs[0].masked());
  ASSERT_TRUE(db.runs[0].masked());
  MergeResult r = merge(da, db);
  EXPECT_TRUE(r.conflicts.empty());
  Checkpoint img = image_of({{0x8000, base}});
  apply(r.merged, img);
  for (size_t i = 0; i < base.size() / 8; ++i)
    ASSERT_EQ(word(img.bytes, i), i % 3 == 0 ? word(ca, i) : word(cb, i)) << i;
  // A word both changed differently is a conflict at its address.
  cb[8 * 3 + 1] ^= 4;
  Checkpoint dc;
  diff_into(dc, 0x8000, base, cb, 1);
  MergeResult rc = merge(da, dc);
  ASSERT_EQ(rc.conflicts.size(), 1u);
  EXPECT_EQ(rc.conflicts[0].address, 0x8000u + 24);
}

TEST(Masked, DisjointMaskedRunsAreCopiedWhole) {
  std::mt19937_64 rng(4);
  Bytes base = random_bytes(rng, 4 * 4096), ca = base, cb = base;
  for (size_t i = 0; i < 1024; i += 2) ca[8 * i] ^= 1;           // pages 0-1
  for (size_t i = 1024; i < 2048; i += 3) cb[8 * i] ^= 1;        // pages 2-3
  Checkpoint da, db;
  diff_into(da, 0x10000, base, ca);
  diff_into(db, 0x10000, base, cb);
  MergeResult r = merge(db, da);
  ASSERT_EQ(r.merged.runs.size(), 4u);
  for (const ckpt::Run& run : r.merged.runs) EXPECT_TRUE(run.masked());
  EXPECT_EQ(r.merged.data_bytes(), da.data_bytes() + db.data_bytes());
}

TEST(Masked, ApplyAcrossTwoImageRegions) {
  Checkpoint c = sample_masked();
  // The masked span 0x1000..0x1038 crosses from one region into the next at 0x1010.
  Checkpoint img = image_of({{0x800, Bytes(0x810, 0)}, {0x1010, Bytes(0x100, 0)}});
  apply(c, img);
  EXPECT_EQ(img.bytes[0x800], 0xa0);                  // word 0 at 0x1000, first region
  EXPECT_EQ(img.bytes[0x810 + 8], 0xa8);              // word 3 at 0x1018, second region
  Checkpoint small = image_of({{0x800, Bytes(0x810, 0)}});
  EXPECT_THROW(apply(c, small), Error);
  EXPECT_EQ(small.bytes, Bytes(0x810, 0));  // nothing written
}

TEST(Masked, InvariantsCatchABadMaskedRun) {
  Checkpoint c = sample_masked();
  c.runs[1].masked_words = 5;
  EXPECT_THROW(check_invariants(c), Error);
  EXPECT_THROW(c.append_masked(0x9000, 16, Bytes(8, 0), Bytes(8, 1), 0), Error);  // no word marked
  uint64_t bits = 0b11;
  EXPECT_THROW(c.append_masked(0x2000, 16, {reinterpret_cast<uint8_t*>(&bits), 8}, Bytes(8, 1), 0), Error);
}

// ---- the checksum ----------------------------------------------------------------------

// The AVX2 build (where the CPU has it) gives the library's values, one shot or in pieces.
// ---- mapping changes (format version 3) ----

MapChange anon_rw(uint64_t s, uint64_t e) { return {s, e, MapChange::What::anon, 3}; }

Checkpoint with_mappings() {
  Checkpoint c = sample_delta();
  c.mappings = {anon_rw(0x200000000000, 0x200000040000), {0x555555559000, 0x55555557a000, MapChange::What::heap, 3},
                {0x7ffff7000000, 0x7ffff7001000, MapChange::What::unmapped, 0}};
  return c;
}

TEST(Mappings, RoundTripIsVersion3AndOthersStayOlder) {
  Checkpoint c = with_mappings();
  EXPECT_EQ(format_version(c), 3);
  File f = serialize(c);
  EXPECT_EQ(f[8], 3);
  Checkpoint d = parse(f);
  EXPECT_EQ(d.mappings, c.mappings);
  EXPECT_EQ(d.bytes, c.bytes);
  ASSERT_EQ(d.runs.size(), c.runs.size());
  EXPECT_EQ(format_version(sample_delta()), 1);
}

TEST(Mappings, CorruptTablesAreRejected) {
  File f = serialize(with_mappings());
  for (size_t n = 0; n < f.size(); ++n) EXPECT_THROW(parse(std::span(f).first(n)), Error) << "length " << n;
  size_t table = kHeaderSize + 8 + 216;  // after the name and the registers
  size_t e0 = table + 8, e1 = e0 + 24;
  expect_parse_error(patch(f, table, 0, 4), "no mapping change", false);
  expect_parse_error(patch(f, table, 1u << 30, 4), "cannot fit", false);
  expect_parse_error(patch(f, table + 4, 1, 4), "reserved", false);
  expect_parse_error(patch(f, e0, 0x200000000010, 8), "not page aligned", false);
  expect_parse_error(patch(f, e0 + 8, 0x200000000000, 8), "empty or reversed", false);
  expect_parse_error(patch(f, e1, 0x200000000000, 8), "overlaps or precedes", false);
  expect_parse_error(patch(f, e0 + 16, 7, 1), "unknown kind", false);
  expect_parse_error(patch(f, e0 + 17, 9, 1), "unknown protection", false);
  expect_parse_error(patch(f, e0 + 18, 1, 1), "reserved", false);
  expect_parse_error(patch(f, 8, 2, 2), "mapping changes in a version 2 file", false);
}

TEST(Mappings, OverlayKeepsTheUpperStateWhereTheyMeet) {
  std::vector<MapChange> under = {anon_rw(0x10000, 0x20000), anon_rw(0x30000, 0x40000)};
  std::vector<MapChange> over = {{0x18000, 0x34000, MapChange::What::unmapped, 0}, anon_rw(0x40000, 0x41000)};
  std::vector<MapChange> want = {anon_rw(0x10000, 0x18000), {0x18000, 0x34000, MapChange::What::unmapped, 0},
                                 anon_rw(0x34000, 0x41000)};
  EXPECT_EQ(overlay_mappings(under, over), want);
  EXPECT_EQ(overlay_mappings({}, over), over);
  EXPECT_EQ(overlay_mappings(under, {}), under);
}

TEST(Mappings, MergeOfTwoNodesOfOneRegionUnitesTheirChanges) {
  Checkpoint a, b;
  a.timestamp = b.timestamp = 5 << 20;
  a.node = 1;
  b.node = 2;
  a.mappings = {anon_rw(0x200000000000, 0x200000010000)};
  b.mappings = {anon_rw(0x201000000000, 0x201000020000), anon_rw(0x200000000000, 0x200000004000)};
  std::sort(b.mappings.begin(), b.mappings.end(), [](auto& x, auto& y) { return x.start < y.start; });
  MergeResult m = merge(a, b);
  std::vector<MapChange> want = {anon_rw(0x200000000000, 0x200000010000), anon_rw(0x201000000000, 0x201000020000)};
  EXPECT_EQ(m.merged.mappings, want);
  EXPECT_EQ(parse(serialize(m.merged)).mappings, want);
}

TEST(Mappings, SameTimeDifferentMapsIsAnErrorAndLaterWinsOtherwise) {
  Checkpoint a, b;
  a.timestamp = b.timestamp = 7;
  a.mappings = {anon_rw(0x10000, 0x20000)};
  b.mappings = {{0x1f000, 0x21000, MapChange::What::unmapped, 0}};
  try {
    merge(a, b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed the memory map differently"), std::string::npos) << e.what();
  }
  b.timestamp = 8;
  std::vector<MapChange> want = {anon_rw(0x10000, 0x1f000), {0x1f000, 0x21000, MapChange::What::unmapped, 0}};
  EXPECT_EQ(merge(a, b).merged.mappings, want);
  EXPECT_EQ(merge(b, a).merged.mappings, want);  // b is later whichever side it is on
}

TEST(Hash, SameValuesAsLibxxhashWholeAndStreamed) {
  std::mt19937_64 rng(13);
  for (size_t n : {size_t{0}, size_t{1}, size_t{16}, size_t{17}, size_t{240}, size_t{241}, size_t{1024},
                   size_t{4096} + 3, size_t{1} << 20}) {
    Bytes b = random_bytes(rng, n);
    uint64_t want = XXH3_64bits(b.data(), b.size());
    EXPECT_EQ(hash64(b), want) << n;
    Hasher h;
    for (size_t at = 0; at < n;) {
      size_t take = std::min(n - at, 1 + rng() % 5000);
      h.update(b.data() + at, take);
      at += take;
    }
    EXPECT_EQ(h.digest(), want) << n;
  }
}

// ---- the buffer pool ------------------------------------------------------------------

TEST(Buffer, BigBlocksAreReusedAndGrowingDoesNotZero) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan every block comes from operator new";
#else
  const uint8_t* first;
  {
    Bytes a(8 << 20, 0x5a);
    first = a.data();
  }
  EXPECT_GE(buffer_pool::pooled_bytes(), size_t{8} << 20);
  Bytes b;
  b.resize(7 << 20);  // best fit: the same block, its old bytes still there (no zero fill)
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b[12345], 0x5a);
  Bytes small(1 << 20);  // not a big block: not from the pool
  EXPECT_NE(small.data(), first);
  EXPECT_LE(buffer_pool::pooled_bytes(), buffer_pool::pool_limit());
#endif
}

}  // namespace
}  // namespace cape::ckpt
