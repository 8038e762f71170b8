// Issue 16 (hardening), the items about processes, through the real `cape` binary: the
// status `cape run` exits with (items 11, 14) and the descriptors a program inherits (item
// 12). Every run is bounded in time and checked for what it leaves behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

// Item 14: a program that cannot run is said once, with a shell's status, every time.
TEST(Hardening, MissingProgramIsSaidOnceWithTheShellsStatus) {
  TempDir d;
  { std::ofstream(d.path + "/not-executable") << "#!/bin/sh\necho hi\n"; }
  ::chmod((d.path + "/not-executable").c_str(), 0644);
  struct Case {
    std::string program;
    int status;
    std::string message;
  };
  for (const Case& c : {Case{"./missing", 127, "cape: cannot run ./missing: No such file or directory\n"},
                        Case{"no-such-command-anywhere", 127,
                             "cape: cannot run no-such-command-anywhere: No such file or directory\n"},
                        Case{"./not-executable", 126, "cape: cannot run ./not-executable: Permission denied\n"}})
    for (int i = 0; i < 5; ++i) {
      Proc p = Proc::start({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--", c.program}, d.path);
      EXPECT_EQ(p.wait(30s), c.status) << c.program << " run " << i << ": " << p.err();
      EXPECT_EQ(p.err(), c.message) << c.program << " run " << i;
    }
}

// Item 11: a slave's program ends with status 5 in a window before every slave has joined:
// the master's node exits with the job's status, the one in its message. (The slave nodes
// are started by hand so that slave 2 joins late, or never.)
TEST(Hardening, SlaveEndingBeforeEveryoneJoinedGivesItsStatus) {
  TempDir d;
  std::string secret = d.path + "/secret";
  {
    std::ofstream(secret) << "0123456789abcdef0123456789abcdef\n";
  }
  ::chmod(secret.c_str(), 0600);
  int port = free_port();
  std::string master = "127.0.0.1:" + std::to_string(port);
  std::string token = unique_token();
  auto node = [&](int rank) {
    return Proc::start({CAPE_BIN, "node", "--rank", std::to_string(rank), "--size", "3", "--master", master,
                        "--secret-file", secret, "--output-dir", d.path + "/logs", "--", EARLY_EXIT, "1", "5",
                        "window", token},
                       d.path);
  };
  Proc m = node(0);
  Proc s1 = node(1);
  int st = m.wait(20s);
  EXPECT_EQ(st, 5) << m.err();
  EXPECT_NE(m.err().find("node 1"), std::string::npos) << m.err();
  EXPECT_NE(m.err().find("exited with status 5"), std::string::npos) << m.err();
  EXPECT_NE(m.err().find("(job exit status 5)"), std::string::npos) << m.err();
  EXPECT_EQ(count_of(m.err(), "cape: "), 1u) << m.err();
  EXPECT_EQ(s1.wait(20s), 5) << read_file(d.path + "/logs/node.1.log");
  EXPECT_TRUE(wait_until_gone(token, 5s));
}

// Item 12: the program inherits no descriptor of cape's (the master's listening socket, the
// status pipe to `cape run`, the secret's pipe): it sees what it sees without cape.
TEST(Hardening, ProgramsInheritNoDescriptorOfCapes) {
  TempDir d;
  // Both started with 0, 1 and 2 only (this test's own process may hold more).
  auto clean = [](std::vector<std::string> argv) {
    std::vector<std::string> v = {"/bin/bash", "-c",
                                  "for f in /proc/$$/fd/*; do n=${f##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; "
                                  "done 2>/dev/null; exec \"$@\"",
                                  "bash"};
    v.insert(v.end(), argv.begin(), argv.end());
    return v;
  };
  Proc native = Proc::start(clean({FDS}), d.path);
  ASSERT_EQ(native.wait(10s), 0);
  ASSERT_EQ(native.out(), "fds done\n");
  Proc p = Proc::start(clean({CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--", FDS}), d.path);
  EXPECT_EQ(p.wait(30s), 0) << p.err();
  EXPECT_EQ(p.out(), native.out());
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), native.out());
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"), native.out());
}

}  // namespace
}  // namespace cape::net::test
