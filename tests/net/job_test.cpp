// Whole jobs through the real `cape` binary: `cape run` (local), mpirun, and the failure
// cases: kill -9 of a slave program, a slave node and the master node in the middle of a
// region. Each test checks the output, the one message, the time bound, and that no
// process of the job is left (every process of a job carries a unique argument).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

TEST(Job, LocalThreeNodes) {
  TempDir d;
  std::string token = unique_token();
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--", FIG3, "3",
                        "0", token},
                       d.path);
  int st = p.wait(60s);
  EXPECT_EQ(st, 0) << p.err();
  EXPECT_EQ(p.out(), "fig3 node=0 nodes=3 regions=3 sum=68694325248 ok\n");
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), "fig3 node=1 nodes=3 regions=3 sum=68694325248 ok\n");
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"), "fig3 node=2 nodes=3 regions=3 sum=68694325248 ok\n");
  EXPECT_TRUE(processes_with(token).empty());
}

TEST(Job, LocalFourNodesTagged) {
  TempDir d;
  std::string token = unique_token();
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "4", "--tag-output", "--output-dir", d.path + "/logs",
                        "--", FIG3, "2", "0", token},
                       d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "[0]<stdout>: fig3 node=0 nodes=4 regions=2 sum=45796212736 ok\n");
  EXPECT_EQ(read_file(d.path + "/logs/node.3.log"),
            "[3]<stdout>: fig3 node=3 nodes=4 regions=2 sum=45796212736 ok\n");
}

TEST(Job, ExitStatusIsTheMasters) {
  TempDir d;
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--", "/bin/sh",
                        "-c", "exit 7"},
                       d.path);
  EXPECT_EQ(p.wait(60s), 7) << p.err();
}

TEST(Job, Mpirun) {
  TempDir d;
  std::string token = unique_token();
  int port = free_port();
  // The secret comes from the environment the user controls (docs/net.md), exported by -x.
  Proc p = Proc::start({"mpirun", "--oversubscribe", "--allow-run-as-root", "-n", "3", "-x",
                        "CAPE_SECRET", CAPE_BIN, "node", "--master",
                        "127.0.0.1:" + std::to_string(port), "--output-dir", d.path + "/logs", "--",
                        FIG3, "2", "0", token},
                       d.path, {"CAPE_SECRET=" + std::string(64, 'k')});
  EXPECT_EQ(p.wait(90s), 0) << p.err();
  EXPECT_NE(p.out().find("fig3 node=0 nodes=3 regions=2 sum=45796212736 ok"), std::string::npos)
      << p.out() << p.err();
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"), "fig3 node=2 nodes=3 regions=2 sum=45796212736 ok\n");
  EXPECT_TRUE(processes_with(token).empty());
}

enum class Victim { slave_program, slave_node, master_node };

// Starts a 3-node job whose slaves nap 3 s inside each region, waits until slave 1 holds its
// "before" (it is then inside the region), kills the victim, and checks the message, the
// bound and that nothing is left.
void kill_mid_region(Victim v, const std::vector<std::string>& expect_in_message) {
  TempDir d;
  std::string token = unique_token();
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--timeout", "2", "--log", "net:debug",
                        "--output-dir", d.path + "/logs", "--", FIG3, "2", "3000", token},
                       d.path);
  ASSERT_TRUE(wait_for_text(d.path + "/logs/node.1.log", "checkpoint 'before' from node 0", 30s))
      << read_file(d.path + "/logs/node.1.log");
  pid_t victim = -1;
  std::vector<pid_t> procs = processes_with(token);
  for (pid_t pid : procs) {
    std::vector<std::string> argv = cmdline(pid);
    bool is_node = argv.size() > 1 && argv[1] == "node";
    bool rank1 = false, rank0 = false;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--rank" && argv[i + 1] == "1") rank1 = true;
      if (argv[i] == "--rank" && argv[i + 1] == "0") rank0 = true;
    }
    if (v == Victim::slave_node && is_node && rank1) victim = pid;
    if (v == Victim::master_node && is_node && rank0) victim = pid;
    if (v == Victim::slave_program && !is_node && argv.size() > 0 && argv[0] == FIG3) {
      // The program whose parent is rank 1's node.
      std::vector<std::string> parent = cmdline(parent_of(pid));
      for (size_t i = 0; i + 1 < parent.size(); ++i)
        if (parent[i] == "--rank" && parent[i + 1] == "1") victim = pid;
    }
  }
  ASSERT_GT(victim, 0) << "no victim among " << procs.size() << " processes";
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  int st = p.wait(30s);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(st, 0);
  EXPECT_LT(took, 6s) << "the job took too long to end";
  std::string err = p.err();
  for (const auto& e : expect_in_message) EXPECT_NE(err.find(e), std::string::npos) << err;
  // One message: one "cape:" line on the terminal.
  size_t lines = 0;
  for (size_t pos = 0; (pos = err.find("cape: ", pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_EQ(lines, 1u) << err;
  // Everything gone, within the bound (processes may take a moment to be reaped by init).
  EXPECT_TRUE(wait_until_gone(token, 5s)) << processes_with(token).size() << " left";
}

TEST(Job, KillSlaveProgramMidRegion) {
  kill_mid_region(Victim::slave_program, {"node 1", "killed by signal 9", "receive('before')"});
}
TEST(Job, KillSlaveNodeMidRegion) {
  kill_mid_region(Victim::slave_node, {"node 1", "vanished", "receive('before')"});
}
TEST(Job, KillMasterNodeMidRegion) {
  kill_mid_region(Victim::master_node, {"node 0", "killed by signal 9", "wait_for('after')"});
}

}  // namespace
}  // namespace cape::net::test
