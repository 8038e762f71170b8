// The process section of complete checkpoints (version 4; ckpt/process_image.h,
// docs/dickpt-format.md "Complete checkpoints of a whole process").
#include "ckpt/process_image.h"
#include "ckpt_test_util.h"

namespace cape::ckpt::test {
namespace {

ProcessImage sample_process() {
  ProcessImage p;
  p.exe = "/usr/bin/prog";
  p.build_id = {0xde, 0xad, 0xbe, 0xef};
  p.exe_size = 12345;
  p.exe_hash = 0x1122334455667788;
  p.cwd = "/tmp";
  p.pid = 42;
  p.start_brk = 0x555555560000;
  p.brk = 0x555555581234;
  p.sig_blocked = 1;
  p.xstate.assign(832, 7);
  p.layout = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  p.mappings.push_back({0x555555554000, 0x555555556000, 0, 5, false, ProcessMapping::What::file, "/usr/bin/prog"});
  p.mappings.push_back({0x555555560000, 0x555555582000, 0, 3, false, ProcessMapping::What::heap, "[heap]"});
  p.mappings.push_back({0x7ffffffde000, 0x7ffffffff000, 0, 3, false, ProcessMapping::What::stack, "[stack]"});
  p.files.push_back({"/usr/bin/prog", 12345, 0x1122334455667788});
  p.fds.push_back({3, 0, 100, "/etc/hosts"});
  p.sigactions.push_back({10, 0x1000, 0x4000000, 0x2000, 0});
  return p;
}

Checkpoint sample_complete() {
  Checkpoint c = image_of({{0x555555560000, Bytes(4096, 1)}, {0x7ffffffde000, Bytes(8192, 2)}});
  c.name = "complete";
  c.registers = Registers{Arch::x86_64, std::vector<uint8_t>(216, 3)};
  c.process = encode_process(sample_process());
  return c;
}

TEST(Process, RoundTrip) {
  ProcessImage p = sample_process();
  EXPECT_EQ(decode_process(encode_process(p)), p);
  Checkpoint c = sample_complete();
  File f = serialize(c);
  EXPECT_EQ(format_version(c), 4);
  EXPECT_EQ(f[8], 4);
  Checkpoint back = parse(f);
  EXPECT_EQ(back.process, c.process);
  EXPECT_EQ(decode_process(back.process), p);
  EXPECT_EQ(back.runs.size(), 2u);
}

TEST(Process, OnlyInCompleteCheckpointsAndTheirDeltas) {
  Checkpoint c = sample_complete();
  c.kind = Kind::merged;
  EXPECT_THROW(serialize(c), Error);
  c.kind = Kind::delta;  // a diff of two complete checkpoints (CAPE-1's diff)
  EXPECT_EQ(parse(serialize(c)).process, c.process);
  File f = serialize(sample_complete());
  expect_parse_error(patch(f, 10, 3, 1), "complete checkpoints and their deltas of version 4 only", false);
  expect_parse_error(patch(f, 8, 3, 2), "version 3", false);
}

TEST(Process, BadRecordsAreRefused) {
  std::vector<uint8_t> good = encode_process(sample_process());
  auto broken = [&](size_t at, uint64_t value, size_t width) {
    std::vector<uint8_t> b = good;
    std::memcpy(b.data() + at, &value, width);
    return b;
  };
  EXPECT_THROW(decode_process(broken(0, 99, 2)), Error);        // unknown tag
  EXPECT_THROW(decode_process(broken(2, 1, 2)), Error);         // reserved
  EXPECT_THROW(decode_process(broken(4, 1u << 30, 4)), Error);  // past the section
  EXPECT_THROW(decode_process(std::span(good).first(good.size() - 8)), Error);  // truncated record
  try {
    decode_process(broken(0, 99, 2));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown record tag 99"), std::string::npos) << e.what();
  }
  // A file whose section length runs past the file.
  Checkpoint c = sample_complete();
  File f = serialize(c);
  size_t section = kHeaderSize + 8 + 216;  // name "complete" (8), registers (216)
  expect_parse_error(patch(f, section, 1u << 20, 8), "process section", false);
  // No executable record.
  ProcessImage p = sample_process();
  std::vector<uint8_t> records = encode_process(p);
  uint32_t first_len;
  std::memcpy(&first_len, records.data() + 4, 4);
  std::vector<uint8_t> without(records.begin() + 8 + ((first_len + 7) & ~7u), records.end());
  try {
    decode_process(without);
    ADD_FAILURE() << "accepted without an executable record";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no executable record"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cape::ckpt::test
