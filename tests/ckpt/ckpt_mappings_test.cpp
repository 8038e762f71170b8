// Mapping changes in checkpoints (format version 3): the table, overlay and merge.
#include <gtest/gtest.h>

#include <algorithm>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt_test_util.h"

namespace cape::ckpt::test {
namespace {

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

}  // namespace
}  // namespace cape::ckpt::test
