// util/spin.h's gate: which runnable tasks are the job's own (docs/critical.md, "Session 15").
// Busy loops are runnable whatever else runs on the host, so these counts do not depend on its load.
#include "util/spin.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cape::util {
namespace {

pid_t busy_child() {
  pid_t pid = ::fork();
  if (pid == 0)
    for (;;) {
    }
  return pid;
}

void end(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// (Threads started just now: let them start spinning.)
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

TEST(SpinGate, BusyThreadsOfThisMonitorAreItsOwn) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < 3; i++)
    busy.emplace_back([&] {
      while (!stop.load()) {
      }
    });
  settle();
  SpinGateReading r = spin_gate_read(SpinGate::own);
  stop = true;
  for (auto& t : busy) t.join();
  EXPECT_GE(r.own_tasks, 3);
  EXPECT_GE(r.own_runnable, 3);  // (the caller is not counted)
  EXPECT_GE(r.runnable, 4);
}

// In a launcher of its own: under ctest -j2 this test's siblings may be this executable's other
// tests, which the gate would take for other local nodes.
TEST(SpinGate, AProgramIsCountedUnlessTheGateIsJob) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  pid_t launcher = ::fork();
  if (launcher == 0) {
    pid_t node = ::fork();
    if (node == 0) {
      pid_t program = busy_child();  // (a child of this node's monitor)
      settle();
      SpinGateReading own = spin_gate_read(SpinGate::own);
      SpinGateReading job = spin_gate_read(SpinGate::job);
      end(program);
      long v[2] = {own.own_runnable, job.own_runnable};
      _exit(::write(p[1], v, sizeof v) == sizeof v ? 0 : 1);
    }
    ::waitpid(node, nullptr, 0);
    _exit(0);
  }
  ::close(p[1]);
  long v[2] = {-1, -1};
  ssize_t n = ::read(p[0], v, sizeof v);
  ::close(p[0]);
  ::waitpid(launcher, nullptr, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof v));
  EXPECT_EQ(v[0], 0);  // own: the program is counted, not left out
  EXPECT_GE(v[1], 1);  // job: left out
}

// A launcher with three children: this test's executable twice (two nodes: one busy, one that
// reads) and a busy shell (another executable: not the job's).
TEST(SpinGate, OtherLocalNodesAreOwnOtherProgramsAreNot) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  pid_t launcher = ::fork();
  if (launcher == 0) {
    pid_t node = busy_child();
    pid_t other = ::fork();
    if (other == 0) {
      ::execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
      _exit(127);
    }
    pid_t reader = ::fork();
    if (reader == 0) {
      settle();
      SpinGateReading r = spin_gate_read(SpinGate::own);
      long v[2] = {r.own_runnable, r.own_tasks};
      _exit(::write(p[1], v, sizeof v) == sizeof v ? 0 : 1);
    }
    ::waitpid(reader, nullptr, 0);
    end(node);
    end(other);
    _exit(0);
  }
  ::close(p[1]);
  long v[2] = {-1, -1};
  ssize_t n = ::read(p[0], v, sizeof v);
  ::close(p[0]);
  ::waitpid(launcher, nullptr, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof v));
  EXPECT_EQ(v[0], 1);  // the busy node, not the shell
  EXPECT_GE(v[1], 1);
}

TEST(SpinGate, ABadValueNamesTheVariable) {
  ::setenv("CAPE_SPIN_GATE", "idle", 1);
  try {
    spin_gate_from_env();
    ADD_FAILURE() << "CAPE_SPIN_GATE=idle accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CAPE_SPIN_GATE='idle': give loadavg"), std::string::npos) << e.what();
  }
  ::setenv("CAPE_SPIN_GATE", "own", 1);
  EXPECT_EQ(spin_gate_from_env(), SpinGate::own);
  ::unsetenv("CAPE_SPIN_GATE");
  EXPECT_EQ(spin_gate_from_env(), SpinGate::loadavg);
}

}  // namespace
}  // namespace cape::util
