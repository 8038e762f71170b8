// Issue 16, acceptance: fault injection. 50 runs of a 3-node job (`cape run`, 127.0.0.1);
// in each, one process of the job (cape run itself, a node, a program) is killed (SIGKILL)
// or stopped for 3 s (SIGSTOP, then SIGCONT; longer than the 2 s --timeout) at a random
// moment of the job, from its start (nodes joining) to its end. Every run ends within 10 s
// of the fault (13 s for a stop), with the status that fault means, one message (none when
// the job ends well or when cape run itself was killed), and no process of the job left.
// A killed program or master node: 137; a killed slave node: 1 (it vanished) or 137 (before
// it joined: cape run names it); a stopped program or cape run: 0 (only slower); a stopped
// node: 1 (silence past --timeout) or 0 (while joining: the join is only slower).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

enum class Who { launcher, master_node, slave_node, master_program, slave_program };
const char* name(Who w) {
  switch (w) {
    case Who::launcher: return "cape run";
    case Who::master_node: return "the master node";
    case Who::slave_node: return "slave node 1";
    case Who::master_program: return "the master's program";
    case Who::slave_program: return "slave 1's program";
  }
  return "?";
}

int rank_of(const std::vector<std::string>& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--rank") return std::atoi(argv[i + 1].c_str());
  return -1;
}

char state_of(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = s.rfind(')');
  return close == std::string::npos || close + 2 >= s.size() ? 'X' : s[close + 2];
}

// The victim's pid, or -1 when it does not exist (yet, or any more).
pid_t find(Who who, const std::string& token) {
  for (pid_t pid : processes_with(token)) {
    std::vector<std::string> argv = cmdline(pid);
    if (argv.size() < 2) continue;
    bool node = argv[1] == "node";
    if (who == Who::launcher && argv[1] == "run") return pid;
    if (who == Who::master_node && node && rank_of(argv) == 0) return pid;
    if (who == Who::slave_node && node && rank_of(argv) == 1) return pid;
    if ((who == Who::master_program || who == Who::slave_program) && argv[0] == FIG3) {
      int r = rank_of(cmdline(parent_of(pid)));
      if ((who == Who::master_program && r == 0) || (who == Who::slave_program && r == 1)) return pid;
    }
  }
  return -1;
}

size_t messages(const std::string& err) {
  size_t n = 0;
  for (size_t pos = 0; (pos = err.find("cape: ", pos)) != std::string::npos; ++pos) ++n;
  return n;
}

TEST(FaultInjection, KillOrStopAnyProcessOfAThreeNodeJob) {
  std::mt19937 rng(16);
  const Who whos[] = {Who::launcher, Who::master_node, Who::slave_node, Who::master_program, Who::slave_program};
  std::ostringstream summary;
  for (int run = 0; run < 50; ++run) {
    Who who = whos[rng() % 5];
    bool stop = rng() % 3 == 0;
    auto delay = std::chrono::milliseconds(rng() % 800);
    SCOPED_TRACE("run " + std::to_string(run) + ": " + (stop ? "stop " : "kill ") + name(who) + " after " +
                 std::to_string(delay.count()) + " ms");
    TempDir d;
    std::string token = unique_token();
    // 3 regions; each slave naps 250 ms per chunk: the job takes about a second.
    Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--timeout", "2", "--output-dir", d.path + "/logs", "--",
                          FIG3, "3", "250", token},
                         d.path);
    auto t0 = Clock::now();
    pid_t victim = -1;
    bool hit = false;  // the signal reached a live process
    while (Clock::now() - t0 < delay || victim < 0) {
      if (Clock::now() - t0 > 5s) break;
      victim = find(who, token);
      if (victim < 0) std::this_thread::sleep_for(2ms);
      else if (Clock::now() - t0 < delay) std::this_thread::sleep_for(1ms);
    }
    auto fault_at = Clock::now();
    if (victim > 0 && state_of(victim) != 'Z') hit = ::kill(victim, stop ? SIGSTOP : SIGKILL) == 0;
    if (hit && stop) {
      std::this_thread::sleep_for(3s);
      ::kill(victim, SIGCONT);
    }
    int status = p.wait(15s);
    auto took = Clock::now() - fault_at;
    std::string err = p.err();
    summary << run << ": " << (stop ? "stop " : "kill ") << name(who) << " at " << delay.count() << " ms"
            << (hit ? "" : " (missed)") << " -> " << status << "\n";
    EXPECT_LT(took, 10s + (stop && hit ? 3s : 0s)) << err;
    // The status the fault means.
    std::set<int> allowed;
    if (!hit || stop) allowed = {0};
    // A node stopped longer than --timeout: silence, the job fails (1); while nodes join, or
    // once that node's part is done, the job only takes longer (0).
    if (hit && stop && (who == Who::master_node || who == Who::slave_node)) allowed = {0, 1};
    if (hit && !stop) {
      switch (who) {
        case Who::launcher: allowed = {137}; break;
        case Who::master_node:
        case Who::master_program:
        case Who::slave_program: allowed = {137}; break;
        case Who::slave_node: allowed = {1, 137}; break;  // 137: before it joined (cape run says so)
      }
    }
    EXPECT_TRUE(allowed.count(status)) << "status " << status << "\n" << err;
    if (who == Who::master_node && hit && !stop) {
      // cape run says where the master was, from the line the master node keeps in a memfd.
      size_t at = err.find("was killed by signal 9 (Killed) ");
      ASSERT_NE(at, std::string::npos) << err;
      std::string where = err.substr(at + 32, err.find('\n', at) - at - 32);
      EXPECT_TRUE(where.rfind("in ", 0) == 0 || where.rfind("outside any parallel region", 0) == 0) << err;
      EXPECT_EQ(where.find('\0'), std::string::npos) << err;
    }
    if (who == Who::launcher && hit && !stop) {
      EXPECT_EQ(messages(err), 0u) << err;
    } else {
      EXPECT_EQ(messages(err), status == 0 ? 0u : 1u) << err;
    }
    EXPECT_TRUE(wait_until_gone(token, 10s)) << processes_with(token).size() << " processes left";
    if (status == 0) {
      EXPECT_EQ(p.out(), "fig3 node=0 nodes=3 regions=3 sum=68694325248 ok\n") << err;
    }
  }
  std::cout << summary.str();
}

// A slave's program killed while its monitor waits for the master's checkpoint (the master
// node held stopped meanwhile): the monitor then reads the dead program's memory and maps and
// used to fail on that ("bad string pointer passed to a runtime call": `its monitor failed
// with status 1`). The program's end is the one thing to report: 137.
TEST(FaultInjection, ASlavesProgramKilledWhileItsMonitorWaitsIsReportedAsKilled) {
  int hits = 0;
  for (int delay_ms : {150, 200, 250, 300}) {
    SCOPED_TRACE("master node stopped at " + std::to_string(delay_ms) + " ms");
    TempDir d;
    std::string token = unique_token();
    Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--timeout", "3", "--output-dir", d.path + "/logs", "--",
                          FIG3, "3", "250", token},
                         d.path);
    // The delay counts from the slave's program's start: on a loaded machine the job takes
    // longer to get there (with load average ~30 no delay hit it when counted from cape run).
    for (auto until = std::chrono::steady_clock::now() + 10s;
         find(Who::slave_program, token) <= 0 && std::chrono::steady_clock::now() < until;)
      std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    pid_t master = find(Who::master_node, token), program = find(Who::slave_program, token);
    if (master > 0) ::kill(master, SIGSTOP);
    std::this_thread::sleep_for(300ms);
    bool hit = program > 0 && state_of(program) != 'Z' && ::kill(program, SIGKILL) == 0;
    std::this_thread::sleep_for(300ms);
    if (master > 0) ::kill(master, SIGCONT);
    int status = p.wait(15s);
    std::string err = p.err();
    EXPECT_EQ(err.find("monitor failed"), std::string::npos) << err;
    if (hit) {
      ++hits;
      EXPECT_EQ(status, 137) << err;
      EXPECT_NE(err.find("killed by signal 9"), std::string::npos) << err;
      EXPECT_EQ(messages(err), 1u) << err;
    }
    EXPECT_TRUE(wait_until_gone(token, 10s)) << processes_with(token).size() << " processes left";
  }
  EXPECT_GT(hits, 0);
}

}  // namespace
}  // namespace cape::net::test
