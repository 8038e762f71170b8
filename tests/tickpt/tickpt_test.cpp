// Data sharing and reductions end to end (002_2c61c2cb27f62a9a.txt Sect. 4, docs/tickpt.md):
// the hand-written CAPE programs of programs/ under the real `cape run -n 3` (and `cape
// monitor`), in both checkpoint models, against the same algorithm built with -fopenmp and
// run with OMP_NUM_THREADS=3.
#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt/format.h"
#include "ckpt/symbols.h"
#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

const std::string kProgs = PROG_DIR;

struct Result {
  int status = -1;
  std::string out, err;
};

Result cape_run(const TempDir& d, const std::vector<std::string>& prog_args,
                const std::vector<std::string>& extra_opts = {}, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs"};
  argv.insert(argv.end(), extra_opts.begin(), extra_opts.end());
  argv.push_back("--");
  argv.insert(argv.end(), prog_args.begin(), prog_args.end());
  Proc p = Proc::start(argv, d.path, env);
  Result r;
  r.status = p.wait(120s);
  r.out = p.out();
  r.err = p.err();
  return r;
}

Result native(const TempDir& d, const std::vector<std::string>& prog_args) {
  Proc p = Proc::start(prog_args, d.path, {"OMP_NUM_THREADS=3"});
  Result r;
  r.status = p.wait(60s);
  r.out = p.out();
  r.err = p.err();
  return r;
}

// "key value" lines (the value is the last word) of the reduction program.
std::map<std::string, std::string> lines(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto sp = line.rfind(' ');
    if (sp != std::string::npos) m[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return m;
}

class Model : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Both, Model, ::testing::Values("tickpt", "dickpt"));

// Every operator over int, long, float and double in two regions. Integers must be equal;
// float within a relative 1e-5 and double within 1e-12 (the partial results are combined
// in another order than OpenMP's threads combine them).
void expect_reductions_equal(const std::string& got_out, const std::string& want_out) {
  auto got = lines(got_out), want = lines(want_out);
  ASSERT_EQ(want.size(), 34u) << want_out;
  ASSERT_EQ(got.size(), want.size()) << got_out;
  for (const auto& [key, w] : want) {
    ASSERT_TRUE(got.count(key)) << key;
    const std::string& g = got[key];
    if (key.rfind("int", 0) == 0 || key.rfind("long", 0) == 0) {
      EXPECT_EQ(g, w) << key;
    } else {
      double tol = key.rfind("float", 0) == 0 ? 1e-5 : 1e-12;
      double gv = std::strtod(g.c_str(), nullptr), wv = std::strtod(w.c_str(), nullptr);
      EXPECT_LE(std::fabs(gv - wv), tol * std::max(1.0, std::fabs(wv))) << key << ": " << g << " vs " << w;
    }
  }
}

TEST_P(Model, EveryReductionOperatorMatchesOpenMP) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_reduce_native"});
  ASSERT_EQ(n.status, 0) << n.err;
  Result c = cape_run(d, {kProgs + "/tickpt_reduce", GetParam()});
  ASSERT_EQ(c.status, 0) << c.err;
  expect_reductions_equal(c.out, n.out);
  // Known values (the OpenMP result does not depend on the thread count for these).
  auto got = lines(c.out);
  EXPECT_EQ(got["int +"], "999005");
  EXPECT_EQ(got["int *"], "3145728");
  EXPECT_EQ(got["int &&"], "0");
  EXPECT_EQ(got["long min"], "-300000000000");
  EXPECT_EQ(got["double max"], "87.375");
}

TEST_P(Model, ReductionsAloneUnderCapeMonitor) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_reduce_native"});
  ASSERT_EQ(n.status, 0) << n.err;
  Proc p = Proc::start({CAPE_BIN, "monitor", "--", kProgs + "/tickpt_reduce", GetParam()}, d.path);
  ASSERT_EQ(p.wait(60s), 0) << p.err();
  expect_reductions_equal(p.out(), n.out);
}

TEST_P(Model, PrivateScratchDoesNotTravelAndKeepsItsValue) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_private_native"});
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(n.out, "a_sum=215904024 tmp=42 scale=3\n");
  Result c = cape_run(d, {kProgs + "/tickpt_private", GetParam()});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, n.out);
  // Every slave ends with the same memory (its private copies restored as well).
  for (int k = 1; k <= 2; ++k)
    EXPECT_NE(read_file(d.path + "/logs/node." + std::to_string(k) + ".log").find(n.out), std::string::npos)
        << "node " << k;
  // Private copies differ between nodes by design: no conflict warning about them.
  EXPECT_EQ(c.err.find("written with different values"), std::string::npos) << c.err;
}

TEST_P(Model, LastprivateTakesTheLastIterationOnASlave) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_lastprivate_native"});
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(n.out, "last=996011 k=998 sum=331842492\n");
  Result c = cape_run(d, {kProgs + "/tickpt_lastprivate", GetParam(), "slave"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, n.out);
  EXPECT_NE(read_file(d.path + "/logs/node.1.log").find(n.out), std::string::npos);
}

TEST_P(Model, LastprivateWithTheMasterOnTheLastChunkAndCapeSetOrder) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_lastprivate", GetParam(), "master"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, "last=996011 k=998 sum=331842492\n");
  EXPECT_NE(read_file(d.path + "/logs/node.2.log").find(c.out), std::string::npos);
}

// threadprivate (each node's copy persists, never overwritten by merged results), copyin
// (the master's copy reaches every node), copyprivate (the writer's value reaches every
// node) and default(none) (an unlisted variable never travels), with known values.
TEST_P(Model, ThreadprivateCopyinCopyprivateDefaultNone) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_clauses", GetParam()});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, "node=0 tp1=338 tp=338 a_sum=498501 b_ok=999 c_sum=499500 x=77 scratch=1000\n");
  EXPECT_NE(read_file(d.path + "/logs/node.1.log")
                .find("node=1 tp1=671 tp=338 a_sum=498501 b_ok=999 c_sum=499500 x=77 scratch=1001\n"),
            std::string::npos);
  EXPECT_NE(read_file(d.path + "/logs/node.2.log")
                .find("node=2 tp1=1004 tp=338 a_sum=498501 b_ok=999 c_sum=499500 x=77 scratch=1002\n"),
            std::string::npos);
  EXPECT_EQ(c.err.find("written with different values"), std::string::npos) << c.err;
}

// Interleaved elements (every word written by several nodes) survive the merge.
TEST_P(Model, NeighbouringElementsFromDifferentNodesAreAllKept) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_interleave", GetParam()});
  ASSERT_EQ(c.status, 0) << c.err;
  // sum(3i+1, i<1000) = 1499500; sum(i%251+1) = 3*(251*252/2) + sum(1..247) = 94878 + 30628
  EXPECT_EQ(c.out, "ints=1499500 bytes=125506 bad=0\n");
  EXPECT_EQ(c.err.find("written with different values"), std::string::npos) << c.err;
}

// The reductions with every dirty-page tracker (docs/monitor.md).
TEST_P(Model, EveryReductionOperatorWithEachTracker) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_reduce_native"});
  ASSERT_EQ(n.status, 0) << n.err;
  for (const char* tracker : {"uffd", "mprotect", "full"}) {
    Result c = cape_run(d, {kProgs + "/tickpt_reduce", GetParam()}, {"--tracker", tracker});
    ASSERT_EQ(c.status, 0) << tracker << ": " << c.err;
    SCOPED_TRACE(tracker);
    expect_reductions_equal(c.out, n.out);
  }
}

// Dynamic memory is shared (002 Sect. 3.1): small and large (mmap'd, placed right below
// the TLS mapping) malloc blocks travel without clause calls; a private heap block stays.
TEST_P(Model, HeapBlocksAreSharedUnlessPrivate) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_heap", GetParam()});
  ASSERT_EQ(c.status, 0) << c.err;
  // sum(i*i, i<1000); sum(k+1, k<2^18)
  EXPECT_EQ(c.out, "small=332833500 large=34359869440 scratch=7 bad=0\n");
}

TEST(Misuse, ClauseCallInsideARegionIsAClearError) {
  TempDir d;
  Proc p = Proc::start({CAPE_BIN, "monitor", "--", kProgs + "/tickpt_heap", "tickpt", "misuse"}, d.path);
  EXPECT_EQ(p.wait(60s), 1);
  EXPECT_NE(p.err().find("inside start() ... stop(): clause calls come before the region's cape_start()"),
            std::string::npos)
      << p.err();
}

// (A node's log mixes its program's stdout and stderr.)

// The merged checkpoints of the master (kind merged, node 0) in `dir`.
std::vector<ckpt::Checkpoint> merged_checkpoints(const std::string& dir) {
  std::vector<ckpt::Checkpoint> out;
  DIR* dp = ::opendir(dir.c_str());
  if (!dp) return out;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dp)) names.push_back(e->d_name);
  ::closedir(dp);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    if (n.rfind("0.", 0) != 0) continue;
    ckpt::Checkpoint c = ckpt::read_file(dir + "/" + n);
    if (c.kind == ckpt::Kind::merged) out.push_back(std::move(c));
  }
  return out;
}

struct VectorRun {
  std::string out;
  uint64_t bytes = 0;
  std::set<std::string> vars;  // variables the merged checkpoints touch
};

VectorRun run_vector(const std::string& model, int size) {
  TempDir d;
  std::string s = std::to_string(size);
  Result c = cape_run(d, {kProgs + "/tickpt_vector", model, s, s}, {"--keep-checkpoints", d.path + "/ck"});
  EXPECT_EQ(c.status, 0) << c.err;
  VectorRun v;
  v.out = c.out;
  auto cks = merged_checkpoints(d.path + "/ck");
  EXPECT_EQ(cks.size(), 2u) << "one merged checkpoint per region";
  for (const ckpt::Checkpoint& ck : cks) {
    v.bytes += ck.data_bytes();
    ckpt::SymbolTable syms = ckpt::SymbolTable::load(kProgs + "/tickpt_vector", ck.load_base);
    for (const ckpt::Run& r : ck.runs)
      ck.for_each_piece(r, [&](uint64_t address, std::span<const uint8_t> piece) {
        for (uint64_t a = address; a < address + piece.size();) {
          const ckpt::Symbol* sym = syms.find(a);
          if (!sym) {
            ++a;
            continue;
          }
          v.vars.insert(sym->name);
          a = std::max(a + 1, sym->address + sym->size);
        }
      });
  }
  return v;
}

// 002 Fig. 8/11: both models compute VECTOR right; TICKPT's merged checkpoints hold only
// B and Y, DICKPT's also i, j, A and Z, and are larger.
TEST(Vector, BothModelsRightAndTickptExcludesPrivateData) {
  TempDir d;
  Result n = native(d, {kProgs + "/tickpt_vector_native", "x", "2000", "2000"});
  ASSERT_EQ(n.status, 0) << n.err;
  VectorRun t = run_vector("tickpt", 2000), k = run_vector("dickpt", 2000);
  EXPECT_EQ(t.out, n.out);
  EXPECT_EQ(k.out, n.out);
  for (const char* v : {"B", "Y"}) {
    EXPECT_TRUE(t.vars.count(v)) << v;
    EXPECT_TRUE(k.vars.count(v)) << v;
  }
  for (const char* v : {"A", "Z", "i", "j"}) {
    EXPECT_FALSE(t.vars.count(v)) << "TICKPT sent " << v;
    EXPECT_TRUE(k.vars.count(v)) << "DICKPT did not send " << v;
  }
  EXPECT_LT(t.bytes, k.bytes);
  std::cout << "VECTOR N=M=2000, merged checkpoint payload: TICKPT " << t.bytes << " bytes, DICKPT "
            << k.bytes << " bytes\n";
  RecordProperty("tickpt_bytes", std::to_string(t.bytes));
  RecordProperty("dickpt_bytes", std::to_string(k.bytes));
}

// `cape run --check-races` (passed to every node), or CAPE_CHECK_RACES=1 in `cape run`'s
// environment, which every node inherits. A job that found races exits with 66 (issue 17).
TEST_P(Model, CheckRacesReportsARacyProgramByName) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_race", GetParam(), "racy"}, {"--check-races"});
  ASSERT_EQ(c.status, 66) << c.err;
  EXPECT_NE(c.err.find("cape: race: parallel region 1 (template.h:"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("cape: --check-races found races in 1 parallel region (exit status 66)\n"), std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("`flag`"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("`bytes"), std::string::npos) << c.err;  // neighbouring bytes: no race
  EXPECT_EQ(c.err.find("`total"), std::string::npos) << c.err;  // a reduction: no race
}

// Without the flag a race is still not silent: one warning, pointing at --check-races. The
// region's own stack locals and spills (written by every node under DICKPT) are not races.
TEST_P(Model, RacyProgramWarnsWithoutTheFlag) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_race", GetParam(), "racy"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("cape: warning: parallel region 1 (template.h:"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("`flag` written with different values"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("(--check-races makes it an error)"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("cape: race:"), std::string::npos) << c.err;
}

TEST_P(Model, CheckRacesIsSilentOnACorrectProgram) {
  TempDir d;
  Result c = cape_run(d, {kProgs + "/tickpt_race", GetParam(), "clean"}, {}, {"CAPE_CHECK_RACES=1"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, "flag=0 bytes=101112 total=44850\n");
  EXPECT_EQ(c.err.find("race"), std::string::npos) << c.err;
}

TEST(CheckRaces, MonitorFlagRunsAlone) {
  TempDir d;
  Proc p = Proc::start({CAPE_BIN, "monitor", "--check-races", "--", kProgs + "/tickpt_race", "tickpt", "racy"},
                       d.path);
  ASSERT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "flag=1 bytes=100000 total=44850\n");  // one node: nothing to race with
  EXPECT_EQ(p.err().find("race"), std::string::npos) << p.err();
}

}  // namespace
}  // namespace cape::net::test
