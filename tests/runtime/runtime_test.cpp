// libcape's side of the memory contract under the real monitor (docs/monitor.md "The heap
// and stdio"): programs that allocate and print inside windows and outside, run by `cape
// monitor` (one node, every tracker) and `cape run -n N`, compared with the same programs
// built with gcc -fopenmp; and what the checkpoints of their windows hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt/format.h"
#include "job_util.h"
#include "protocol.h"

namespace cape::net::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Result {
  int status = -1;
  std::string out, err;
};

// argv run in `dir`, stdin from `input` (a file) when given.
Result run(const TempDir& d, std::vector<std::string> argv, const std::vector<std::string>& env = {},
           const std::string& input = "") {
  if (!input.empty()) {
    std::string cmd = "exec";
    for (const auto& a : argv) cmd += " '" + a + "'";
    cmd += " < '" + input + "'";
    argv = {"/bin/sh", "-c", cmd};
  }
  Proc p = Proc::start(argv, d.path, env);
  Result r;
  r.status = p.wait(120s);
  r.out = p.out();
  r.err = p.err();
  return r;
}

// A program of tests/runtime/programs built at test time: with gcc -fopenmp (`native`) and
// with cape-cc (`prog`), both with `flags`.
void build(const TempDir& d, const std::string& name, const std::vector<std::string>& flags) {
  std::string src = std::string(PROG_SRC) + "/" + name + ".c";
  std::vector<std::string> gcc = {"gcc", "-fopenmp", "-Wall", "-Werror", src, "-o", d.path + "/native"};
  std::vector<std::string> cc = {CAPE_CC, "-fopenmp", "-Wall", "-Werror", src, "-o", d.path + "/prog"};
  for (const auto& f : flags) {
    if (f.rfind("--", 0) != 0) gcc.insert(gcc.begin() + 1, f);
    cc.insert(cc.begin() + 1, f);
  }
  Result g = run(d, gcc);
  ASSERT_EQ(g.status, 0) << g.err;
  Result c = run(d, cc);
  ASSERT_EQ(c.status, 0) << c.err;
}

// ---- a hand-written window under `cape monitor`, every tracker, both models ----

class WindowHeap : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(WindowHeap, SameOutputAsOpenMPAndNoStdioInTheCheckpoints) {
  auto [tracker, model] = GetParam();
  TempDir d;
  Result want = run(d, {WINDOW_HEAP_NATIVE}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(want.status, 0) << want.err;
  std::string keep = d.path + "/keep";
  Result got = run(d, {CAPE_BIN, "monitor", "--tracker", tracker, "--keep-checkpoints", keep, "--", WINDOW_HEAP, model});
  ASSERT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.out, want.out);

  // stdout's buffer (the program names it on stderr) is in no checkpoint; arena 0's header
  // is written by no window; node 0's arena is, beyond its first commit too (it grew).
  uint64_t buf = 0, buf_len = 0;
  {
    std::istringstream in(got.err);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("stdout-buffer ", 0) == 0) {
        std::istringstream l(line.substr(14));
        l >> std::hex >> buf >> std::dec >> buf_len;
      }
  }
  ASSERT_NE(buf, 0u) << got.err;
  EXPECT_EQ(buf_len, 8192u);
  EXPECT_FALSE(buf >= CAPE_HEAP_BASE && buf < CAPE_HEAP_END) << "stdout's buffer is in the cape heap";
  int files = 0;
  uint64_t node0_high = 0;
  for (const auto& e : fs::directory_iterator(keep)) {
    auto ck = cape::ckpt::read_file(e.path().string());
    files++;
    for (const auto& r : ck.runs) {
      EXPECT_FALSE(r.address < buf + buf_len && r.end() > buf)
          << e.path() << ": a run at 0x" << std::hex << r.address << " holds stdout's buffer";
      EXPECT_FALSE(r.address < CAPE_HEAP_BASE + 3072 && r.end() > CAPE_HEAP_BASE)
          << e.path() << ": a window wrote arena 0's header at 0x" << std::hex << r.address;
      if (r.address >= CAPE_HEAP_NODE_BASE && r.address < CAPE_HEAP_NODE_BASE + CAPE_HEAP_NODE_SPAN)
        node0_high = std::max<uint64_t>(node0_high, r.end() - CAPE_HEAP_NODE_BASE);
    }
  }
  EXPECT_GE(files, 6);
  EXPECT_GT(node0_high, 16u * 1024) << "no window allocation beyond node 0's first commit";
}

INSTANTIATE_TEST_SUITE_P(Trackers, WindowHeap,
                         ::testing::Combine(::testing::Values("uffd", "mprotect", "full"),
                                            ::testing::Values("dickpt", "tickpt")));

// ---- ordinary OpenMP programs built with cape-cc ----

class PrintAlloc : public ::testing::TestWithParam<std::string> {};

// stdin read in the sequential part, printing inside regions (more than a buffer's worth),
// allocations in `single` and `master`: one node under the monitor, as gcc -fopenmp with one
// thread.
TEST_P(PrintAlloc, OneNodeUnderTheMonitorAsOpenMP) {
  TempDir d;
  ASSERT_NO_FATAL_FAILURE(build(d, "print_alloc", {GetParam()}));
  std::string input = d.path + "/input";
  {
    std::ostringstream s;
    for (int i = 1; i <= 3000; i++) s << i << "\n";
    FILE* f = std::fopen(input.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs(s.str().c_str(), f);
    std::fclose(f);
  }
  Result want = run(d, {d.path + "/native"}, {"OMP_NUM_THREADS=1"}, input);
  ASSERT_EQ(want.status, 0) << want.err;
  ASSERT_NE(want.out.find("read 3000 numbers, sum 4501500"), std::string::npos) << want.out;
  for (const char* tracker : {"uffd", "mprotect"}) {
    Result got = run(d, {CAPE_BIN, "monitor", "--tracker", tracker, "--", d.path + "/prog"}, {}, input);
    EXPECT_EQ(got.status, 0) << tracker << got.err;
    EXPECT_EQ(got.out, want.out) << tracker;
  }
}

INSTANTIATE_TEST_SUITE_P(Opt, PrintAlloc, ::testing::Values("-O0", "-O2"));

class RegionAlloc : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

// Every node allocates inside parallel loops, frees blocks of the sequential part and of
// other nodes there (deferred), and the sequential part reads and frees them all: the same
// output as gcc -fopenmp with as many threads as nodes.
TEST_P(RegionAlloc, OnSeveralNodesAsOpenMP) {
  auto [nodes, model, opt] = GetParam();
  TempDir d;
  ASSERT_NO_FATAL_FAILURE(build(d, "region_alloc", {opt, "--ckpt=" + model}));
  Result want = run(d, {d.path + "/native"}, {"OMP_NUM_THREADS=" + std::to_string(nodes)});
  ASSERT_EQ(want.status, 0) << want.err;
  Result got = run(d, {CAPE_BIN, "run", "-n", std::to_string(nodes), "--output-dir", d.path + "/logs", "--",
                       d.path + "/prog"});
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.out, want.out);
  EXPECT_EQ(got.err.find("differently"), std::string::npos) << got.err;
  for (const auto& e : fs::directory_iterator(d.path + "/logs")) {
    std::string log = read_file(e.path().string());
    EXPECT_EQ(log.find("differently"), std::string::npos) << e.path() << ": " << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Nodes, RegionAlloc,
                         ::testing::Combine(::testing::Values(2, 3, 4), ::testing::Values("dickpt", "tickpt"),
                                            ::testing::Values("-O0", "-O2")));

// Issue 10's heap stress (programs/heap_stress.c: 200 regions allocating, reallocating and
// freeing 16 B .. 8 MiB in `single`, `master` and loop bodies, shared lists checked after
// each). One node: the regions run serially (cape-cc), the heap and stdio under the monitor.
class HeapStress : public ::testing::TestWithParam<std::string> {};

TEST_P(HeapStress, OneNodeUnderTheMonitorAsOpenMP) {
  TempDir d;
  ASSERT_NO_FATAL_FAILURE(build(d, "heap_stress", {GetParam()}));
  Result want = run(d, {d.path + "/native"}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(want.status, 0) << want.err;
  Result got = run(d, {CAPE_BIN, "monitor", "--", d.path + "/prog"});
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.out, want.out);
}

// On several nodes the node arenas grow inside regions (blocks up to 8 MiB), and the other
// nodes replay that growth (the checkpoints' mapping changes, monitor/map_changes.h) before
// injecting.
TEST_P(HeapStress, ThreeNodesAsOpenMP) {
  TempDir d;
  ASSERT_NO_FATAL_FAILURE(build(d, "heap_stress", {GetParam()}));
  Result want = run(d, {d.path + "/native"}, {"OMP_NUM_THREADS=3"});
  ASSERT_EQ(want.status, 0) << want.err;
  Result got = run(d, {CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--", d.path + "/prog"});
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.out, want.out);
}

INSTANTIATE_TEST_SUITE_P(Opt, HeapStress, ::testing::Values("-O0", "-O2"));

}  // namespace
}  // namespace cape::net::test
