// The monitor's ways out when the job must end while the program runs (issue 3): an
// Exchange call that throws, KillSwitch::kill() from another thread (the node's network
// side), and a remote syscall whose thread is killed under it. Each time run_monitor
// returns 1 with a message, and the program is dead and reaped (no orphan, no zombie).
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "monitor/exchange.h"
#include "monitor/monitor.h"
#include "monitor/remote_syscall.h"
#include "util/error.h"

namespace {

using cape::monitor::KillSwitch;
using cape::monitor::MonitorOptions;

// A two-node job's network whose calls fail (send) or block until the kill switch is
// pulled, then fail (receive: the connection went down with the job).
class FakeExchange : public cape::monitor::Exchange {
 public:
  explicit FakeExchange(KillSwitch* ks) : ks_(ks) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void send(const cape::ckpt::Checkpoint&, int node) override {
    throw cape::UserError("node " + std::to_string(node) + " is unreachable (fake exchange)");
  }
  cape::ckpt::Checkpoint receive(const std::string&) override {
    while (!ks_->killed()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    throw cape::UserError("receive: the connection closed (fake exchange)");
  }
  // Pulls the kill switch (which SIGKILLs the program) in the middle of a runtime call and
  // returns as if nothing happened: the monitor then finds the program gone.
  void broadcast(const cape::ckpt::Checkpoint&) override {
    ks_->kill("the job was cancelled during broadcast (test)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  void wait_for(const std::string&,
                const std::function<void(cape::ckpt::Checkpoint&&, int)>&) override {}
  void program_exited(int, bool) override { ++exits; }
  void set_region(const std::string&) override {}
  std::atomic<int> exits{0};

 private:
  KillSwitch* ks_;
};

class TempFile {
 public:
  TempFile() {
    char tmpl[] = "/tmp/cape-kill-test-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) std::abort();
    close(fd);
    unlink(tmpl);  // the program creates it
    path_ = tmpl;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The pid the program wrote, once it has (0 after 20 s).
pid_t wait_for_pid(const std::string& file) {
  for (int i = 0; i < 4000; i++) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

// Neither running nor a zombie: kill(pid, 0) fails with ESRCH once it has been reaped.
bool gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

struct Outcome {
  int status = -1;
  std::string err;
  pid_t pid = 0;
};

class KillPaths : public ::testing::TestWithParam<std::string> {
 protected:
  // Runs the victim in this process's run_monitor; `during(pid)` runs on another thread
  // once the program has started its window.
  template <class During>
  Outcome run(const std::string& mode, cape::monitor::Exchange* ex, KillSwitch* ks, During during) {
    MonitorOptions o;
    o.tracker = cape::monitor::parse_tracker_kind(GetParam());
    o.argv = {CAPE_KILL_VICTIM, pidfile.path(), mode};
    o.kill_switch = ks;
    o.pin_for_sync_tracker = false;  // keep this test process free to move
    Outcome out;
    std::thread t([&] {
      out.pid = wait_for_pid(pidfile.path());
      during(out.pid);
    });
    testing::internal::CaptureStderr();
    out.status = cape::monitor::run_monitor(o, ex);
    out.err = testing::internal::GetCapturedStderr();
    t.join();
    return out;
  }
  TempFile pidfile;
};

TEST_P(KillPaths, KillSwitchFromAnotherThreadWhileTheProgramRuns) {
  KillSwitch ks;
  Outcome r = run("spin", nullptr, &ks, [&](pid_t pid) {
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well into its loop
    ks.kill("the master node failed (test)");
  });
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cape: the master node failed (test)"), std::string::npos) << r.err;
  EXPECT_TRUE(gone(r.pid)) << r.pid;
}

TEST_P(KillPaths, ExchangeThatThrowsEndsTheJob) {
  KillSwitch ks;
  FakeExchange ex(&ks);
  Outcome r = run("send", &ex, &ks, [](pid_t) {});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("node 1 is unreachable (fake exchange)"), std::string::npos) << r.err;
  EXPECT_TRUE(gone(r.pid)) << r.pid;
}

TEST_P(KillPaths, KillSwitchWhileAnExchangeCallBlocks) {
  KillSwitch ks;
  FakeExchange ex(&ks);
  Outcome r = run("receive", &ex, &ks, [&](pid_t pid) {
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // inside receive()
    ks.kill("the launcher closed the connection (test)");
  });
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cape: "), std::string::npos) << r.err;
  EXPECT_TRUE(gone(r.pid)) << r.pid;
}

TEST_P(KillPaths, KillSwitchWhileTheMonitorWorksInTheProgram) {
  KillSwitch ks;
  FakeExchange ex(&ks);
  Outcome r = run("broadcast", &ex, &ks, [](pid_t) {});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cape: the job was cancelled during broadcast (test)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("monitor error"), std::string::npos) << r.err;
  EXPECT_TRUE(gone(r.pid)) << r.pid;
}

TEST_P(KillPaths, KillSwitchPulledBeforeTheProgramStarts) {
  KillSwitch ks;
  ks.kill("cancelled before the start (test)");
  MonitorOptions o;
  o.tracker = cape::monitor::parse_tracker_kind(GetParam());
  o.argv = {CAPE_KILL_VICTIM, pidfile.path(), "spin"};
  o.kill_switch = &ks;
  o.pin_for_sync_tracker = false;
  testing::internal::CaptureStderr();
  int status = cape::monitor::run_monitor(o, nullptr);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1) << err;
  EXPECT_NE(err.find("cancelled before the start (test)"), std::string::npos) << err;
  std::ifstream in(pidfile.path());
  pid_t pid = 0;
  if (in >> pid) {
    EXPECT_TRUE(gone(pid)) << pid;  // it never got that far, or it is gone
  }
}

INSTANTIATE_TEST_SUITE_P(Trackers, KillPaths, ::testing::Values("mprotect", "uffd", "full"),
                         [](const auto& info) { return info.param; });

// `syscall; int3` in this binary: a forked child has it at the same address.
extern "C" void kill_test_gadget();
__asm__(
    ".text\n"
    ".globl kill_test_gadget\n"
    ".type kill_test_gadget,@function\n"
    "kill_test_gadget:\n"
    "  syscall\n"
    "  int3\n"
    "  ud2\n"
    ".size kill_test_gadget, .-kill_test_gadget\n");

// A remote syscall that blocks (pause) in a thread killed meanwhile: TraceeDied with the
// kill's status, the registers are not restored (nothing left to restore), the child is
// reaped by the wait that saw it die.
TEST(RemoteSyscall, InterruptedByAKill) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    raise(SIGSTOP);
    for (;;) pause();
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFSTOPPED(st));
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(pid, SIGKILL);
  });
  bool died = false;
  try {
    cape::monitor::AutoRemoteSyscalls remote(pid, pid, reinterpret_cast<uint64_t>(&kill_test_gadget));
    remote.syscall(SYS_pause);
    ADD_FAILURE() << "pause returned";
  } catch (const cape::monitor::TraceeDied& d) {
    died = true;
    EXPECT_EQ(d.tid, pid);
    EXPECT_EQ(d.status.kind(), cape::monitor::WaitStatus::signaled);
    EXPECT_EQ(d.status.signal(), SIGKILL);
  }
  killer.join();
  EXPECT_TRUE(died);
  EXPECT_TRUE(gone(pid));
  errno = 0;
  EXPECT_EQ(waitpid(pid, &st, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
