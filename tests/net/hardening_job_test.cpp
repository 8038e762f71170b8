// Issue 16 (hardening) through the real `cape` binary, on 127.0.0.1: the status `cape run`
// exits with (items 11, 14), the descriptors a program inherits (12), where the master
// listens (2), nodes of another job (3), a slave whose launcher is gone (6). Every run is
// bounded in time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
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
  Proc p = Proc::start(clean({CAPE_BIN, "run", "-n", "3", "--any-program", "--output-dir", d.path + "/logs", "--", FDS}), d.path);
  EXPECT_EQ(p.wait(30s), 0) << p.err();
  EXPECT_EQ(p.out(), native.out());
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), native.out());
  EXPECT_EQ(read_file(d.path + "/logs/node.2.log"), native.out());
}

std::string write_secret(const TempDir& d) {
  std::string secret = d.path + "/secret";
  std::ofstream(secret) << "0123456789abcdef0123456789abcdef\n";
  ::chmod(secret.c_str(), 0600);
  return secret;
}

// The address of the TCP socket listening on `port` ("127.0.0.1", "0.0.0.0", "::", ...),
// from /proc/net/tcp{,6}; "" if none (yet).
std::string listening_address(int port) {
  char want[8];
  std::snprintf(want, sizeof want, "%04X", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string sl, local, remote, state;
      ss >> sl >> local >> remote >> state;
      size_t colon = local.find(':');
      if (state != "0A" || colon == std::string::npos || local.substr(colon + 1) != want) continue;
      std::string hex = local.substr(0, colon);
      if (hex == "0100007F") return "127.0.0.1";
      if (hex == "00000000") return "0.0.0.0";
      if (hex == std::string(32, '0')) return "::";
      return hex;
    }
  }
  return "";
}

// Item 2: `cape node --master 127.0.0.1:P` listens on 127.0.0.1, not on every interface;
// --listen says where else.
TEST(Hardening, TheMasterListensWhereItIsTold) {
  TempDir d;
  std::string secret = write_secret(d);
  for (bool explicit_listen : {false, true}) {
    int port = free_port();
    std::string token = unique_token();
    std::string master = "127.0.0.1:" + std::to_string(port);
    std::vector<std::string> args = {CAPE_BIN, "node", "--rank", "0", "--size", "2", "--master", master,
                                     "--secret-file", secret};
    if (explicit_listen) args.insert(args.end(), {"--listen", "0.0.0.0:" + std::to_string(port)});
    for (std::string a : {std::string("--"), std::string(FIG3), std::string("1"), std::string("0"), token})
      args.push_back(a);
    Proc m = Proc::start(args, d.path);
    std::string where;
    for (int i = 0; i < 500 && where.empty(); ++i) {
      where = listening_address(port);
      if (where.empty()) std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(where, explicit_listen ? "0.0.0.0" : "127.0.0.1");
    Proc s = Proc::start({CAPE_BIN, "node", "--rank", "1", "--size", "2", "--master", master, "--secret-file",
                          secret, "--output-dir", d.path + "/logs", "--", FIG3, "1", "0", token},
                         d.path);
    EXPECT_EQ(m.wait(30s), 0) << m.err();
    EXPECT_EQ(s.wait(30s), 0);
    EXPECT_EQ(m.out(), "fig3 node=0 nodes=2 regions=1 sum=22898104320 ok\n");
  }
}

// Item 3: two jobs share a secret file; a node of the other job is refused when it joins,
// told why, and the job goes on with its own nodes.
TEST(Hardening, ANodeOfAnotherJobIsRefusedUpFront) {
  TempDir d;
  std::string secret = write_secret(d);
  int port = free_port();
  std::string master = "127.0.0.1:" + std::to_string(port);
  std::string token = unique_token();
  // --sync eager given: CAPE_SYNC=lazy in the environment would name it in the identities.
  auto node = [&](int rank, const std::string& job, const std::string& regions, const std::string& sync = "eager") {
    return Proc::start({CAPE_BIN, "node", "--rank", std::to_string(rank), "--size", "2", "--master", master,
                        "--job", job, "--secret-file", secret, "--output-dir", d.path + "/logs-" + job, "--sync",
                        sync, "--", FIG3, regions, "0", token},
                       d.path);
  };
  Proc m = node(0, "A", "1");
  // Job B's slave (same program, other job id), then job A's own slave with other arguments.
  Proc b = node(1, "B", "1");
  EXPECT_EQ(b.wait(10s), 1);
  std::string log_b = read_file(d.path + "/logs-B/node.1.log");
  EXPECT_NE(log_b.find("refused rank 1: it belongs to another job (job B, program " + std::string(FIG3) +
                       " 1 0 " + token + "; this job: job A, program " + FIG3 + " 1 0 " + token + ")"),
            std::string::npos)
      << log_b;
  Proc other_args = node(1, "A", "2");
  EXPECT_EQ(other_args.wait(10s), 1);
  EXPECT_NE(read_file(d.path + "/logs-A/node.1.log").find("it belongs to another job"), std::string::npos);
  // A node that would synchronise lazily (another --sync, or CAPE_SYNC on its host only).
  Proc lazy = node(1, "A", "1", "lazy");
  EXPECT_EQ(lazy.wait(10s), 1);
  std::string log_lazy = read_file(d.path + "/logs-A/node.1.log");
  EXPECT_NE(log_lazy.find("refused rank 1: it belongs to another job (job A, program " + std::string(FIG3) + " 1 0 " +
                          token + ", --sync lazy; this job: job A, program " + FIG3 + " 1 0 " + token + ")"),
            std::string::npos)
      << log_lazy;
  Proc a = node(1, "A", "1");
  EXPECT_EQ(a.wait(30s), 0) << read_file(d.path + "/logs-A/node.1.log");
  EXPECT_EQ(m.wait(30s), 0) << m.err();
  EXPECT_EQ(m.out(), "fig3 node=0 nodes=2 regions=1 sum=22898104320 ok\n");
}

// Item 6 (second half): a slave started over ssh stops trying to join when its channel (its
// stdin, --watch-stdin) closes, instead of retrying until --connect-timeout.
TEST(Hardening, ASlaveStopsJoiningWhenItsChannelCloses) {
  TempDir d;
  int port = free_port();  // nobody listens there
  std::string token = unique_token();
  std::string fifo = d.path + "/channel";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Proc s = Proc::start({"/bin/sh", "-c", "exec \"$@\" < " + fifo, "sh", CAPE_BIN, "node", "--rank", "1", "--size",
                        "2", "--master", "127.0.0.1:" + std::to_string(port), "--secret-fd", "0", "--watch-stdin",
                        "--connect-timeout", "60", "--output-dir", d.path + "/logs", "--", FIG3, "1", "0", token},
                       d.path);
  int w = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  std::string line = "0123456789abcdef0123456789abcdef\n";
  ASSERT_EQ(::write(w, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  std::this_thread::sleep_for(500ms);  // it is retrying the connection now
  auto t0 = std::chrono::steady_clock::now();
  ::close(w);  // the channel closes
  EXPECT_EQ(s.wait(20s), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_NE(read_file(d.path + "/logs/node.1.log").find("the launcher is gone"), std::string::npos)
      << read_file(d.path + "/logs/node.1.log");
}

// Item 4: a whole job with --encrypt gives what the same job gives without it.
TEST(Hardening, AnEncryptedJobGivesTheSameResults) {
  TempDir d;
  std::string outs[2];
  for (int encrypt = 0; encrypt < 2; ++encrypt) {
    std::vector<std::string> args = {CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs"};
    if (encrypt) args.push_back("--encrypt");
    for (std::string a : {std::string("--"), std::string(FIG3), std::string("3")}) args.push_back(a);
    Proc p = Proc::start(args, d.path);
    EXPECT_EQ(p.wait(60s), 0) << p.err();
    outs[encrypt] = p.out() + read_file(d.path + "/logs/node.1.log") + read_file(d.path + "/logs/node.2.log");
  }
  EXPECT_EQ(outs[1], outs[0]);
  EXPECT_NE(outs[0].find("fig3 node=2 nodes=3 regions=3"), std::string::npos) << outs[0];
}

// Item 7: a symlink planted at a slave's log name (cape-logs/node.N.log) is replaced, not
// written through: its target keeps its bytes.
TEST(Hardening, ASymlinkAtALogNameIsReplacedNotFollowed) {
  TempDir d;
  std::string victim = d.path + "/victim";
  { std::ofstream(victim) << "precious\n"; }
  ::mkdir((d.path + "/logs").c_str(), 0755);
  ASSERT_EQ(::symlink(victim.c_str(), (d.path + "/logs/node.1.log").c_str()), 0);
  Proc p = Proc::start({CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--", FIG3, "1"}, d.path);
  EXPECT_EQ(p.wait(30s), 0) << p.err();
  EXPECT_EQ(read_file(victim), "precious\n");
  struct stat st;
  ASSERT_EQ(::lstat((d.path + "/logs/node.1.log").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_file(d.path + "/logs/node.1.log"), "fig3 node=1 nodes=2 regions=1 sum=22898104320 ok\n");
  // A path that is not a directory is refused, and said so.
  { std::ofstream(d.path + "/plain") << "x"; }
  Proc q = Proc::start({CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/plain", "--", FIG3, "1"}, d.path);
  EXPECT_EQ(q.wait(30s), 1);
  EXPECT_EQ(q.err(), "cape: --output-dir: " + d.path + "/plain exists and is not a directory\n");
  EXPECT_EQ(read_file(d.path + "/plain"), "x");
}

}  // namespace
}  // namespace cape::net::test
