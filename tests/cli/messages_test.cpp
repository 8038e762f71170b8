// Where cape's messages say the program was (issue 17): the region by the user's file:line
// of its construct (as the translator named it, with or without -g), the sequential part
// when the program ended there, a slave's crash with its first frames on the terminal, and
// races said once per region with the variable's name. tests/cli/programs/regions.c, built
// with cape-cc at -O0 -g and at -O2 without -g, run on 3 or 4 local nodes.
#include <gtest/gtest.h>

#include <regex>

#include "../net/job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

struct Build {
  const char* name;
  std::vector<std::string> flags;
  bool debug;
};
const Build kBuilds[] = {{"O0g", {"-O0", "-g"}, true}, {"O2", {"-O2"}, false}};
void PrintTo(const Build& b, std::ostream* os) { *os << b.name; }

class Messages : public ::testing::TestWithParam<Build> {
 protected:
  std::string build() {
    std::string exe = d_.path + "/regions";
    std::vector<std::string> cmd = {CAPE_CC};
    cmd.insert(cmd.end(), GetParam().flags.begin(), GetParam().flags.end());
    cmd.insert(cmd.end(), {REGIONS_C, "-o", exe});
    Proc cc = Proc::start(cmd, d_.path);
    EXPECT_EQ(cc.wait(120s), 0) << cc.err();
    return exe;
  }
  Proc run(int nodes, const std::string& mode, std::vector<std::string> options = {}) {
    std::vector<std::string> cmd = {CAPE_BIN, "run", "-n", std::to_string(nodes), "--output-dir", d_.path + "/logs"};
    cmd.insert(cmd.end(), options.begin(), options.end());
    cmd.insert(cmd.end(), {exe_, mode});
    return Proc::start(cmd, d_.path);
  }
  void SetUp() override { exe_ = build(); }
  TempDir d_;
  std::string exe_;
};

// "node 1 (host, pid 123)" -> "node 1 (HOST, pid PID)": what varies between runs. Also drops
// a node's warning that it refused a connection without the job's secret: another test's
// late node can reach this job's ephemeral port (seen once in a ctest -j2 run beside other
// jobs); refusing it is right, and not what these tests look at (net tests check it).
std::string stable(const std::string& s) {
  std::string kept = std::regex_replace(s, std::regex(R"(\[cape net [^\]]*\] warn: refused a connection from [^\n]*\n)"), "");
  return std::regex_replace(kept, std::regex(R"(\((the master at )?[^,()]+, pid [0-9]+\))"), "($1HOST, pid PID)");
}

const std::string kRegion = std::string("parallel region 1 (") + REGIONS_C + ":19)";

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A slave's program exits inside the region: the region named by its construct's line.
TEST_P(Messages, AnExitInARegionNamesTheConstructsLine) {
  Proc p = run(3, "exit");
  EXPECT_EQ(p.wait(60s), 3);
  EXPECT_EQ(stable(p.err()),
            "cape: node 1 (HOST, pid PID): program exited with status 3 in " + kRegion + " (job exit status 3)\n");
}

// The master returns 5 after the last region: the sequential part, not "in parallel region
// 1 ..., in wait_for('after')".
TEST_P(Messages, AReturnAfterTheLastRegionIsInTheSequentialPart) {
  Proc p = run(3, "return");
  EXPECT_EQ(p.wait(60s), 5);
  EXPECT_EQ(p.out(), "sum=499500\n");
  EXPECT_EQ(stable(p.err()), "cape: node 0 (the master at HOST, pid PID): program exited with status 5 in the "
                             "sequential part after " + kRegion + " (job exit status 5)\n");
}

// A reader that goes away while the program prints after the region: the same place.
TEST_P(Messages, ABrokenPipeAfterTheRegionIsInTheSequentialPart) {
  Proc p = Proc::start({"/bin/bash", "-c",
                        "'" + std::string(CAPE_BIN) + "' run -n 3 --output-dir logs '" + exe_ +
                            "' print | head -1; echo \"cape=${PIPESTATUS[0]}\" >&2"},
                       d_.path);
  EXPECT_EQ(p.wait(60s), 0);
  EXPECT_EQ(p.out(), "sum=499500\n");
  EXPECT_EQ(stable(p.err()), "cape: node 0 (the master at HOST, pid PID): program killed by signal 13 (Broken pipe) "
                             "in the sequential part after " + kRegion + " (job exit status 141)\ncape=141\n");
}

// Node 1's program crashes in the region: its first frames on the terminal (file:line with
// -g), and where its whole report is.
TEST_P(Messages, ASlavesCrashShowsItsFirstFramesAndWhereTheReportIs) {
  Proc p = run(3, "crash");
  EXPECT_EQ(p.wait(60s), 139);
  std::string err = stable(p.err());
  std::string head = "cape: node 1 (HOST, pid PID): program killed by signal 11 (Segmentation fault) in " + kRegion +
                     " (job exit status 139)\n  #0 0x";
  EXPECT_EQ(err.substr(0, head.size()), head) << err;
  size_t from = err.find('\n') + 1;
  std::string frame0 = err.substr(from, err.find('\n', from) - from);
  if (GetParam().debug)
    EXPECT_TRUE(std::regex_match(frame0, std::regex(R"(  #0 0x[0-9a-f]+ main\+0x[0-9a-f]+ \(regions\) at regions\.c:22)")))
        << frame0;
  else
    EXPECT_TRUE(std::regex_match(frame0, std::regex(R"(  #0 0x[0-9a-f]+ main\+0x[0-9a-f]+ \(regions\))"))) << frame0;
  EXPECT_NE(err.find("  (the whole report: " + d_.path + "/logs/node.1.log on "), std::string::npos) << err;
  EXPECT_LE(count_of(err, "\n  #"), 3u) << err;  // the first frames only
  // The whole report is in the log, with the same first frame.
  EXPECT_NE(read_file(d_.path + "/logs/node.1.log").find(frame0), std::string::npos);
}

// A race: one warning line per region (not one per slave) naming the variable and the
// region's construct; status 0. Under --check-races the same as `cape: race:`, and the job
// exits with 66 saying why.
TEST_P(Messages, ARaceIsOneLinePerRegionNamingTheVariable) {
  Proc p = run(4, "race");
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "sum=499500\n");
  EXPECT_EQ(p.err(), "cape: warning: " + kRegion + ": `flag` written with different values on several nodes "
                     "(merging node 1's, node 2's and node 3's parts), without a reduction: a data race; one "
                     "node's value was kept (--check-races makes it an error)\n");
  Proc q = run(4, "race", {"--check-races"});
  EXPECT_EQ(q.wait(60s), 66);
  EXPECT_EQ(q.out(), "sum=499500\n");
  EXPECT_EQ(q.err(), "cape: race: " + kRegion + ": `flag` written with different values on several nodes "
                     "(merging node 1's, node 2's and node 3's parts), without a reduction\n"
                     "cape: --check-races found races in 1 parallel region (exit status 66)\n");
}

INSTANTIATE_TEST_SUITE_P(Builds, Messages, ::testing::ValuesIn(kBuilds),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cape::net::test
