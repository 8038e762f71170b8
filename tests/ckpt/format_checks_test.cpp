// The reader's first checks (issue 16, items 8 and 9): the sizes a header declares are held
// against the file's size before anything is hashed or read, and an empty register set is
// refused on both sides (it used to reach memcpy with a null pointer, UBSan in `make fuzz`).
#include <gtest/gtest.h>

#include <cstring>

#include "ckpt/format.h"

namespace cape::ckpt {
namespace {

Checkpoint sample() {
  Checkpoint c;
  c.name = "after";
  c.append(0x1000, std::vector<uint8_t>(24, 3), 5);
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FormatChecks, AnEmptyRegisterSetIsRefused) {
  Checkpoint c = sample();
  c.registers = Registers{Arch::x86_64, {}};
  EXPECT_EQ(error_of([&] { serialize(c); }), "an empty register set (no registers: leave it out)");
  // The same file as the fuzzer found it: registers flag, x86_64, length 0.
  std::vector<uint8_t> f = serialize(sample());
  f[11] |= 1;
  uint16_t arch = 1;
  std::memcpy(f.data() + 52, &arch, 2);
  for (bool checksum : {false, true})
    EXPECT_NE(error_of([&] { parse(f, {checksum}); }).find(checksum ? "checksum mismatch" : "empty register set"),
              std::string::npos);
}

TEST(FormatChecks, DeclaredSizesAreCheckedBeforeTheChecksum) {
  std::vector<uint8_t> f = serialize(sample());
  std::vector<uint8_t> longer = f;
  longer.resize(f.size() + 4096, 0);
  EXPECT_EQ(error_of([&] { parse(longer); }),
            "the file is " + std::to_string(longer.size()) + " bytes but its header declares " +
                std::to_string(f.size()));
  // From the header alone, whatever follows it.
  EXPECT_NO_THROW(check_header({f.data(), kHeaderSize}, f.size()));
  EXPECT_NE(error_of([&] { check_header({f.data(), kHeaderSize}, uint64_t{64} << 30); }).find("header declares"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_header({f.data(), kHeaderSize}, f.size() - 8); }).find("truncated"),
            std::string::npos);
  std::vector<uint8_t> zeros(kHeaderSize, 0);
  EXPECT_EQ(error_of([&] { check_header(zeros, uint64_t{1} << 36); }), "not a DICKPT checkpoint (bad magic)");
  // A payload larger than the file is named as such.
  std::vector<uint8_t> g = f;
  uint64_t huge = uint64_t{1} << 40;
  std::memcpy(g.data() + 56, &huge, 8);
  EXPECT_NE(error_of([&] { parse(g); }).find("payload size 1099511627776 exceeds the file's"), std::string::npos);
}

TEST(FormatChecks, AMappingTableMustFillWhatTheHeaderLeaves) {
  Checkpoint c = sample();
  c.mappings.push_back({0x10000, 0x20000, MapChange::What::anon, 3});
  std::vector<uint8_t> f = serialize(c);
  EXPECT_NO_THROW(parse(f));
  std::vector<uint8_t> g = f;
  g.resize(f.size() + 8, 0);  // not a whole entry more
  EXPECT_NE(error_of([&] { parse(g, {false}); }).find("does not match its header and a mapping table"),
            std::string::npos);
}

}  // namespace
}  // namespace cape::ckpt
