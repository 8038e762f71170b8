// `cape ckpt` end to end: real files, the real `cape` binary, outputs checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/symbols.h"

namespace cape::ckpt {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Result sh(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

class CkptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cape-cli-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) { return (dir_ / name).string(); }
  std::string cape() { return CAPE_BINARY; }
  fs::path dir_;
};

Checkpoint delta_at(uint64_t addr, std::vector<uint8_t> bytes, uint64_t ts, uint32_t node) {
  Checkpoint c;
  c.node = node;
  c.timestamp = ts;
  c.name = "after";
  c.append(addr, bytes, ts);
  return c;
}

TEST_F(CkptCli, DumpJsonIsTheDocumentedObject) {
  Checkpoint c = delta_at(0x1000, {0xde, 0xad, 0xbe, 0xef}, 3, 2);
  c.sequence = 9;
  c.append(0x2000, std::vector<uint8_t>(4, 1), 3, {ReduceOp::add, ElemType::i32});
  write_file(c, path("a.dickpt"));
  Result r = sh(cape() + " ckpt dump --json " + path("a.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "{\"version\":1,\"kind\":\"delta\",\"node\":2,\"sequence\":9,\"timestamp\":3,\"name\":\"after\","
            "\"load_base\":0,\"runs\":[{\"address\":4096,\"length\":4,\"timestamp\":3,\"data\":\"deadbeef\"},"
            "{\"address\":8192,\"length\":4,\"timestamp\":3,\"reduction\":{\"op\":\"+\",\"type\":\"int32\"},"
            "\"data\":\"01010101\"}]}\n");
  r = sh(cape() + " ckpt dump " + path("a.dickpt"));
  EXPECT_NE(r.out.find("0x1000         4 B  t=3  deadbeef"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reduction(+:int32)"), std::string::npos) << r.out;
}

// A masked run: its span and its pieces in text, its pieces as runs in JSON.
TEST_F(CkptCli, DumpShowsAMaskedRunAsItsPieces) {
  Checkpoint c;
  c.name = "after";
  uint64_t bitmap = 0b1011001;  // words 0, 3, 4, 6
  std::vector<uint8_t> words(32);
  for (size_t i = 0; i < words.size(); ++i) words[i] = static_cast<uint8_t>(i);
  c.append_masked(0x1000, 56, {reinterpret_cast<uint8_t*>(&bitmap), 8}, words, 5);
  write_file(c, path("m.dickpt"));
  Result r = sh(cape() + " ckpt dump --json " + path("m.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "{\"version\":2,\"kind\":\"delta\",\"node\":0,\"sequence\":0,\"timestamp\":0,\"name\":\"after\","
            "\"load_base\":0,\"runs\":["
            "{\"address\":4096,\"length\":8,\"timestamp\":5,\"masked\":true,\"data\":\"0001020304050607\"},"
            "{\"address\":4120,\"length\":16,\"timestamp\":5,\"masked\":true,"
            "\"data\":\"08090a0b0c0d0e0f1011121314151617\"},"
            "{\"address\":4144,\"length\":8,\"timestamp\":5,\"masked\":true,\"data\":\"18191a1b1c1d1e1f\"}]}\n");
  r = sh(cape() + " ckpt dump " + path("m.dickpt"));
  EXPECT_NE(r.out.find("DICKPT v2 delta"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0x1000        56 B  t=5  masked: 4 words changed in 3 pieces"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    0x1018        16 B  t=5  08090a0b0c0d0e0f1011121314151617"), std::string::npos) << r.out;
  r = sh(cape() + " ckpt stat " + path("m.dickpt"));
  EXPECT_NE(r.out.find("1 runs (1 masked), 32 bytes of data"), std::string::npos) << r.out;
}

TEST_F(CkptCli, DumpShowsMappingChanges) {
  Checkpoint c = delta_at(0x200000000010, {1, 2}, 0, 0);
  c.mappings = {{0x200000000000, 0x200000040000, MapChange::What::anon, 3},
                {0x7ffff7000000, 0x7ffff7001000, MapChange::What::unmapped, 0}};
  write_file(c, path("map.dickpt"));
  Result r = sh(cape() + " ckpt dump --json " + path("map.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("{\"version\":3,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"mappings\":[{\"start\":35184372088832,\"end\":35184372350976,\"kind\":\"anon\",\"prot\":\"rw-\"},"
                       "{\"start\":140737337360384,\"end\":140737337364480,\"kind\":\"unmapped\",\"prot\":\"---\"}],"
                       "\"runs\":["),
            std::string::npos)
      << r.out;
  r = sh(cape() + " ckpt dump " + path("map.dickpt"));
  EXPECT_NE(r.out.find("DICKPT v3 delta"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  mapping 0x200000000000-0x200000040000  anon rw-\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  mapping 0x7ffff7000000-0x7ffff7001000  unmapped ---\n"), std::string::npos) << r.out;
}

TEST_F(CkptCli, VerifyNamesTheFileAndWhatIsWrong) {
  write_file(delta_at(0x1000, {1, 2, 3}, 0, 0), path("good.dickpt"));
  std::vector<uint8_t> bytes = serialize(delta_at(0x1000, {1, 2, 3}, 0, 0));
  bytes[70] ^= 4;
  std::ofstream(path("bad.dickpt"), std::ios::binary).write(reinterpret_cast<char*>(bytes.data()), bytes.size());
  std::ofstream(path("short.dickpt")) << "hello";
  Result r = sh(cape() + " ckpt verify " + path("good.dickpt") + " " + path("bad.dickpt") + " " + path("short.dickpt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("good.dickpt: ok (delta, 1 runs, 3 bytes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad.dickpt: checksum mismatch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("short.dickpt: truncated"), std::string::npos) << r.out;
  r = sh(cape() + " ckpt dump " + path("bad.dickpt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("cape: " + path("bad.dickpt") + ": checksum mismatch"), std::string::npos) << r.out;
}

TEST_F(CkptCli, MergeReportsConflictsOrFails) {
  write_file(delta_at(0x1000, {1, 1, 1, 1}, 0, 1), path("a.dickpt"));
  write_file(delta_at(0x1002, {2, 2, 1, 1}, 0, 2), path("b.dickpt"));
  write_file(delta_at(0x2000, {5}, 0, 3), path("c.dickpt"));
  Result r = sh(cape() + " ckpt merge " + path("a.dickpt") + " " + path("b.dickpt") + " " + path("c.dickpt") +
                " -o " + path("m.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("conflicting writes at 0x1002, 2 bytes"), std::string::npos) << r.out;
  Checkpoint m = read_file(path("m.dickpt"));
  EXPECT_EQ(m.kind, Kind::merged);
  ASSERT_EQ(m.runs.size(), 2u);
  EXPECT_EQ(m.bytes, (ckpt::Bytes{1, 1, 2, 2, 1, 1, 5}));  // the second kept
  r = sh(cape() + " ckpt merge --fail-on-conflict " + path("a.dickpt") + " " + path("b.dickpt") + " -o " +
         path("n.dickpt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("conflicting writes at 0x1002"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("n.dickpt")));
}

TEST_F(CkptCli, DiffOfTwoCompleteImages) {
  Checkpoint a, b;
  a.kind = b.kind = Kind::complete;
  std::vector<uint8_t> img(64, 0);
  a.append(0x4000, img, 0);
  img[17] = 9;
  b.append(0x4000, img, 0);
  write_file(a, path("a.dickpt"));
  write_file(b, path("b.dickpt"));
  Result r = sh(cape() + " ckpt diff " + path("a.dickpt") + " " + path("b.dickpt") + " -o " + path("d.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  Checkpoint d = read_file(path("d.dickpt"));
  ASSERT_EQ(d.runs.size(), 1u);
  EXPECT_EQ(d.runs[0].address, 0x4011u);
  EXPECT_EQ(d.bytes, ckpt::Bytes{9});
  r = sh(cape() + " ckpt diff " + path("d.dickpt") + " " + path("b.dickpt") + " -o " + path("e.dickpt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("is a delta checkpoint; diff compares two complete ones"), std::string::npos) << r.out;
}

TEST_F(CkptCli, StatCountsRunsBytesAndCoverage) {
  Checkpoint c = delta_at(0x1000, std::vector<uint8_t>(100, 1), 0, 0);
  c.append(0x1100, std::vector<uint8_t>(156, 2), 0);
  write_file(c, path("s.dickpt"));
  Result r = sh(cape() + " ckpt stat " + path("s.dickpt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 runs, 256 bytes of data"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("addresses 0x1000..0x119c (412 bytes), coverage 62.14%"), std::string::npos) << r.out;
}

// --elf names variables in PIE and non-PIE programs run without address randomisation.
void check_elf_names(const std::string& cape, const std::string& prog, const std::string& out) {
  Result r = sh("setarch x86_64 -R " + prog);
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream in(r.out);
  uint64_t addr[4];
  for (auto& a : addr) in >> std::hex >> a;
  // Code addresses name their function (used when a program has no debug information).
  SymbolTable table = SymbolTable::load(prog);
  const Symbol* f = table.find_function(addr[3] + 1);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "main");
  EXPECT_EQ(table.find(addr[3]), nullptr);  // not a data object
  // matrix_a[2], counter, message[3..4]; appended in address order.
  std::vector<std::pair<uint64_t, size_t>> runs = {{addr[0] + 16, 8}, {addr[1], 8}, {addr[2] + 3, 2}};
  std::sort(runs.begin(), runs.end());
  Checkpoint c;
  for (auto [a, n] : runs) c.append(a, std::vector<uint8_t>(n, 1), 0);
  write_file(c, out);
  r = sh(cape + " ckpt dump --json --elf " + prog + " " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"symbol\":\"matrix_a\",\"offset\":16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"symbol\":\"counter\",\"offset\":0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"symbol\":\"message\",\"offset\":3"), std::string::npos) << r.out;
}

TEST_F(CkptCli, DumpElfNamesVariablesPie) { check_elf_names(cape(), GLOBALS_PIE, path("p.dickpt")); }
TEST_F(CkptCli, DumpElfNamesVariablesNoPie) { check_elf_names(cape(), GLOBALS_NOPIE, path("n.dickpt")); }

}  // namespace
}  // namespace cape::ckpt
