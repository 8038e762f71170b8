// Finding what changed (ckpt::Differ, diff_into) and the masked runs it makes of scattered
// changes: the word scans, their file form, merge and apply.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/word_scan.h"
#include "ckpt_test_util.h"

namespace cape::ckpt::test {
namespace {

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

}  // namespace
}  // namespace cape::ckpt::test
