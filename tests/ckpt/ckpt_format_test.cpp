// The DICKPT file format (ckpt/format.h): round trips, parts, and every way a file can be
// broken.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "ckpt/format.h"
#include "ckpt_test_util.h"

namespace cape::ckpt::test {
namespace {

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
  expect_parse_error(g, "unsupported DICKPT version 9; this cape reads versions 1 to 4");
  g[8] = 0;
  expect_parse_error(g, "unsupported DICKPT version 0");
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

}  // namespace
}  // namespace cape::ckpt::test
