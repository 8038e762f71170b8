// The program's standard streams in whole jobs (net/program_io.h, docs/net.md "Output and
// input"): an OpenMP program built with cape-cc reads stdin in its sequential part and prints
// inside a region; every node's region line reaches the job's stdout once (tagged with its
// rank under --tag-output), the sequential output appears once, every node reads the same
// input, and a slave's log keeps its whole output. Through cape run and through mpirun.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string build(const TempDir& d) {
  std::string exe = d.path + "/region_io";
  Proc cc = Proc::start({CAPE_CC, "-O2", REGION_IO_C, "-o", exe}, d.path);
  EXPECT_EQ(cc.wait(120s), 0) << cc.err();
  return exe;
}

TEST(Stdio, RegionLinesFromEveryNodeOnceTaggedAndStdinEverywhere) {
  TempDir d;
  std::string exe = build(d);
  Proc p = Proc::start({"/bin/sh", "-c",
                        "seq 1 1000 | " + std::string(CAPE_BIN) + " run -n 3 --tag-output --output-dir " + d.path +
                            "/logs " + exe},
                       d.path);
  ASSERT_EQ(p.wait(90s), 0) << p.err();
  std::vector<std::string> out = lines(p.out());
  ASSERT_EQ(out.size(), 5u) << p.out();
  EXPECT_EQ(out.front(), "[0]<stdout>: read 1000 numbers");
  EXPECT_EQ(out.back(), "[0]<stdout>: done");  // after every node's region line
  std::vector<std::string> region(out.begin() + 1, out.end() - 1);
  std::vector<std::string> want = {"[0]<stdout>: thread 0 of 3: sum 500500", "[1]<stdout>: thread 1 of 3: sum 500500",
                                   "[2]<stdout>: thread 2 of 3: sum 500500"};
  EXPECT_EQ(sorted(region), want);
  // A slave's log: its whole output (it read the same input; it ends after the last region).
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"),
            "[2]<stdout>: read 1000 numbers\n[2]<stdout>: thread 2 of 3: sum 500500\n");
}

TEST(Stdio, UnderMpirunRankZerosStdinReachesEveryNode) {
  TempDir d;
  std::string exe = build(d);
  int port = free_port();
  // mpirun gives its stdin to rank 0 only; cape node streams it to the others.
  Proc p = Proc::start({"/bin/sh", "-c",
                        "seq 1 10 | mpirun --oversubscribe --allow-run-as-root -n 3 -x CAPE_SECRET " +
                            std::string(CAPE_BIN) + " node --master 127.0.0.1:" + std::to_string(port) +
                            " --output-dir " + d.path + "/logs -- " + exe},
                       d.path, {"CAPE_SECRET=" + std::string(64, 'k')});
  ASSERT_EQ(p.wait(90s), 0) << p.err();
  std::vector<std::string> want = {"done", "read 10 numbers", "thread 0 of 3: sum 55", "thread 1 of 3: sum 55",
                                   "thread 2 of 3: sum 55"};
  EXPECT_EQ(sorted(lines(p.out())), want) << p.err();
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), "read 10 numbers\nthread 1 of 3: sum 55\n");
}

}  // namespace
}  // namespace cape::net::test
