// WaitStatus on the statuses of real children: the words every part prints and the shell's
// exit codes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "util/wait_status.h"

namespace cape {
namespace {

// The status of a child that runs `body` (which ends it).
template <class Body>
WaitStatus status_of(Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(99);
  }
  int raw = 0;
  EXPECT_EQ(waitpid(pid, &raw, 0), pid);
  return WaitStatus{raw};
}

TEST(WaitStatus, ExitCodes) {
  WaitStatus zero = status_of([] { _exit(0); });
  EXPECT_EQ(zero.kind(), WaitStatus::exited);
  EXPECT_TRUE(zero.ok());
  EXPECT_EQ(zero.shell_code(), 0);
  EXPECT_EQ(zero.describe(), "exited with status 0");

  WaitStatus three = status_of([] { _exit(3); });
  EXPECT_EQ(three.kind(), WaitStatus::exited);
  EXPECT_FALSE(three.ok());
  EXPECT_EQ(three.exit_code(), 3);
  EXPECT_EQ(three.shell_code(), 3);
  EXPECT_EQ(three.describe(), "exited with status 3");
}

TEST(WaitStatus, KilledBySignalLikeAShell) {
  WaitStatus killed = status_of([] { ::kill(getpid(), SIGKILL); });
  EXPECT_EQ(killed.kind(), WaitStatus::signaled);
  EXPECT_FALSE(killed.ok());
  EXPECT_EQ(killed.signal(), SIGKILL);
  EXPECT_EQ(killed.shell_code(), 128 + SIGKILL);
  EXPECT_EQ(killed.describe(), "killed by signal 9 (" + std::string(strsignal(SIGKILL)) + ")");
}

TEST(WaitStatus, StoppedChild) {
  pid_t pid = fork();
  if (pid == 0) {
    ::raise(SIGSTOP);
    _exit(0);
  }
  int raw = 0;
  ASSERT_EQ(waitpid(pid, &raw, WUNTRACED), pid);
  WaitStatus ws{raw};
  EXPECT_EQ(ws.kind(), WaitStatus::signal_stop);
  EXPECT_EQ(ws.signal(), SIGSTOP);
  EXPECT_FALSE(ws.ok());
  EXPECT_EQ(ws.shell_code(), 1);
  EXPECT_EQ(ws.describe(), "stopped by " + std::string(strsignal(SIGSTOP)));
  ::kill(pid, SIGKILL);
  ASSERT_EQ(waitpid(pid, &raw, 0), pid);
}

}  // namespace
}  // namespace cape
