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
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "2", "--any-program", "--output-dir", d.path + "/logs", "--", "/bin/sh",
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

// A slave's program fails: cape run exits with that program's status (128+signal when
// killed), and the one message says so.
TEST(Job, SlaveFailureGivesItsStatus) {
  struct Case {
    std::string fail;
    int code;
    std::string words;
  };
  for (const Case& c : {Case{"fail=2:5", 5, "node 2 (" }, Case{"fail=1:-6", 134, "node 1 ("}}) {
    TempDir d;
    std::string token = unique_token();
    Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--", FIG3,
                          "2", "0", token, c.fail},
                         d.path);
    EXPECT_EQ(p.wait(60s), c.code) << p.err();
    std::string err = p.err();
    EXPECT_NE(err.find(c.words), std::string::npos) << err;
    EXPECT_NE(err.find("(job exit status " + std::to_string(c.code) + ")"), std::string::npos) << err;
    EXPECT_EQ(p.out(), "");
    EXPECT_TRUE(wait_until_gone(token, 10s));
  }
}

// The same under mpirun. mpirun kills the other ranks as soon as one exits with non-zero, so
// which nodes still hear the master's abort varies; its exit status is the first failing
// rank's, the failing program's node, which exits with that program's status.
TEST(Job, MpirunSlaveFailureGivesItsStatus) {
  TempDir d;
  std::string token = unique_token();
  int port = free_port();
  Proc p = Proc::start({"mpirun", "--oversubscribe", "--allow-run-as-root", "-n", "3", "-x",
                        "CAPE_SECRET", CAPE_BIN, "node", "--master",
                        "127.0.0.1:" + std::to_string(port), "--output-dir", d.path + "/logs", "--",
                        FIG3, "2", "0", token, "fail=2:5"},
                       d.path, {"CAPE_SECRET=" + std::string(64, 'k')});
  EXPECT_EQ(p.wait(90s), 5) << p.err();
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

// `cape run ... | head -1`: once head has gone, the master node stops relaying and closes
// its end of the program's pipe; the program then gets SIGPIPE on its own write (its default
// disposition, not the node's) and the job ends with 141 like a shell pipeline. The node is
// not killed by SIGPIPE: it reports the program's end and stops the slaves.
TEST(Job, OutputReaderGoesAway) {
  TempDir d;
  std::string token = unique_token();
  std::string cmd = std::string("'") + CAPE_BIN + "' run -n 3 --any-program --log net:info --output-dir logs -- '" +
                    LINES + "' 1000000 default " + token +
                    " | head -1; echo \"cape=${PIPESTATUS[0]}\" >&2";
  Proc p = Proc::start({"/bin/bash", "-c", cmd}, d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "line 1\n");
  std::string err = p.err();
  EXPECT_NE(err.find("cape=141"), std::string::npos) << err;
  EXPECT_NE(err.find("no longer relaying"), std::string::npos) << err;
  EXPECT_NE(err.find("program killed by signal 13"), std::string::npos) << err;
  // Quiet like a shell: no crash report (backtraces) for a reader that went away.
  EXPECT_EQ(err.find("cape: the program was killed by signal"), std::string::npos) << err;
  EXPECT_EQ(err.find("the master node, pid"), std::string::npos) << "the node died:\n" << err;
  EXPECT_TRUE(wait_until_gone(token, 10s)) << processes_with(token).size() << " left";
}

// A program that ignores SIGPIPE sees EPIPE on its own write instead, as without cape.
TEST(Job, OutputReaderGoesAwayProgramIgnoresSigpipe) {
  TempDir d;
  std::string token = unique_token();
  std::string cmd = std::string("'") + CAPE_BIN + "' run -n 2 --any-program --output-dir logs -- '" + LINES +
                    "' 1000000 ignore-sigpipe " + token +
                    " | head -1; echo \"cape=${PIPESTATUS[0]}\" >&2";
  Proc p = Proc::start({"/bin/bash", "-c", cmd}, d.path);
  EXPECT_EQ(p.wait(60s), 0) << p.err();
  EXPECT_EQ(p.out(), "line 1\n");
  std::string err = p.err();
  EXPECT_NE(err.find("lines: write failed: Broken pipe"), std::string::npos) << err;
  EXPECT_NE(err.find("cape=3"), std::string::npos) << err;
  EXPECT_TRUE(wait_until_gone(token, 10s)) << processes_with(token).size() << " left";
}

enum class Victim { slave_program, slave_node, master_node };

// Starts a 3-node job whose slaves nap 3 s inside each region, waits until slave 1 holds its
// "before" (it is then inside the region), kills the victim, and checks the message, the
// bound and that nothing is left.
void kill_mid_region(Victim v, int expect_status, const std::vector<std::string>& expect_in_message) {
  TempDir d;
  std::string token = unique_token();
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--timeout", "2", "--log", "net:debug",
                        "--output-dir", d.path + "/logs", "--", FIG3, "2", "3000", token},
                       d.path);
  // Both slaves hold their "before" (the master is done sending), then a moment for the
  // master to reach wait_for: every node is then inside the region, slaves napping.
  for (const char* log : {"/logs/node.1.log", "/logs/node.2.log"})
    ASSERT_TRUE(wait_for_text(d.path + log, "checkpoint 'before' from node 0", 30s))
        << read_file(d.path + log);
  std::this_thread::sleep_for(300ms);
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
  EXPECT_EQ(st, expect_status) << p.err();
  EXPECT_LT(took, 6s) << "the job took too long to end";
  std::string err = p.err();
  // An expectation "a|b" is met by either.
  for (const auto& e : expect_in_message) {
    bool found = false;
    for (size_t from = 0;;) {
      size_t bar = e.find('|', from);
      found = found || err.find(e.substr(from, bar == std::string::npos ? bar : bar - from)) != std::string::npos;
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
    EXPECT_TRUE(found) << "'" << e << "' not in:\n" << err;
  }
  // One message: one "cape:" line on the terminal.
  size_t lines = 0;
  for (size_t pos = 0; (pos = err.find("cape: ", pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_EQ(lines, 1u) << err;
  // Everything gone, within the bound (processes may take a moment to be reaped by init).
  EXPECT_TRUE(wait_until_gone(token, 5s)) << processes_with(token).size() << " left";
}

TEST(Job, KillSlaveProgramMidRegion) {
  // Slave 1 is computing in the region: named by its last exchange call until the monitor
  // names regions (set_region), by the region afterwards.
  kill_mid_region(Victim::slave_program, 137,
                  {"node 1", "killed by signal 9", "receive('before')|parallel region 1 (fig3.c:"});
}
TEST(Job, KillSlaveNodeMidRegion) {
  kill_mid_region(Victim::slave_node, 1,
                  {"node 1", "vanished", "receive('before')|parallel region 1 (fig3.c:"});
}
TEST(Job, KillMasterNodeMidRegion) {
  kill_mid_region(Victim::master_node, 137, {"node 0", "killed by signal 9", "wait_for('after')"});
}

}  // namespace
}  // namespace cape::net::test
