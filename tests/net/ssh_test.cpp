// A 3-node job launched through a real OpenSSH server started on 127.0.0.1 by the test, with
// a generated host key, user key, authorized_keys and known_hosts in a temporary directory.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "job_util.h"
#include "net/socket.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

class Sshd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/sbin/sshd", X_OK) != 0) GTEST_SKIP() << "no /usr/sbin/sshd (openssh-server)";
    // sshd insists on its privilege-separation directory.
    if (::mkdir("/run/sshd", 0755) != 0 && errno != EEXIST) GTEST_SKIP() << "cannot create /run/sshd";
    const std::string& t = dir_.path;
    for (const char* k : {"host_key", "user_key"}) {
      Proc g = Proc::start({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", t + "/" + k}, t);
      ASSERT_EQ(g.wait(30s), 0) << g.err();
    }
    std::ofstream(t + "/authorized_keys") << read_file(t + "/user_key.pub");
    port_ = free_port();
    std::ofstream(t + "/sshd_config")
        << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << t << "/host_key\n"
        << "PidFile " << t << "/sshd.pid\nAuthorizedKeysFile " << t << "/authorized_keys\n"
        << "PermitRootLogin yes\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
        << "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
        << "ForceCommand " << t << "/record.sh\n";
    // Every remote command line, as the remote host's process list shows it, kept in
    // commands.log (then run as sshd would).
    std::ofstream(t + "/record.sh") << "#!/bin/sh\nprintf '%s\\n' \"$SSH_ORIGINAL_COMMAND\" >> " << t
                                    << "/commands.log\nexec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n";
    ::chmod((t + "/record.sh").c_str(), 0755);
    // known_hosts as ssh writes it for a non-standard port.
    std::string pub = read_file(t + "/host_key.pub");
    std::ofstream(t + "/known_hosts") << "[127.0.0.1]:" << port_ << " " << pub;
    sshd_ = Proc::start({"/usr/sbin/sshd", "-D", "-e", "-f", t + "/sshd_config"}, t);
    // Up when it accepts connections (bounded by connect_tcp's deadline).
    try {
      connect_tcp({"127.0.0.1", static_cast<uint16_t>(port_)}, 10s);
    } catch (const std::exception& e) {
      FAIL() << "sshd did not start: " << e.what() << "\n" << sshd_.err();
    }
  }
  void TearDown() override {
    if (sshd_.pid() > 0) {
      ::kill(sshd_.pid(), SIGTERM);
      sshd_.wait(10s);
    }
  }
  std::vector<std::string> run_args(const std::string& token, const std::string& known_hosts,
                                    bool accept_new, const std::string& extra = "") {
    std::vector<std::string> a = {CAPE_BIN, "run", "-n", "3", "--launcher", "ssh", "-H",
                                  "127.0.0.1:2", "--ssh-port", std::to_string(port_),
                                  "--identity", dir_.path + "/user_key", "--known-hosts",
                                  known_hosts, "--remote-cape", CAPE_BIN, "--output-dir",
                                  dir_.path + "/logs"};
    if (accept_new) a.push_back("--accept-new-host-keys");
    for (std::string s : {std::string("--"), std::string(FIG3), std::string("2"), std::string("0"), token})
      a.push_back(s);
    if (!extra.empty()) a.push_back(extra);
    return a;
  }
  TempDir dir_;
  Proc sshd_;
  int port_ = 0;
};

TEST_F(Sshd, ThreeNodeJob) {
  std::string token = unique_token();
  Proc p = Proc::start(run_args(token, dir_.path + "/known_hosts", false), dir_.path);
  EXPECT_EQ(p.wait(90s), 0) << p.err() << "\nsshd:\n" << sshd_.err();
  EXPECT_EQ(p.out(), "fig3 node=0 nodes=3 regions=2 sum=45796212736 ok\n") << p.err();
  EXPECT_EQ(read_file(dir_.path + "/logs/node.2.log"), "fig3 node=2 nodes=3 regions=2 sum=45796212736 ok\n");
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

// A remote slave's program exits with 5: cape run exits with 5 and says so.
TEST_F(Sshd, RemoteSlaveFailureGivesItsStatus) {
  std::string token = unique_token();
  Proc p = Proc::start(run_args(token, dir_.path + "/known_hosts", false, "fail=2:5"), dir_.path);
  EXPECT_EQ(p.wait(90s), 5) << p.err();
  EXPECT_NE(p.err().find("node 2 ("), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("(job exit status 5)"), std::string::npos) << p.err();
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

// Issue 16, item 6: the environment reaches the remote nodes' programs over the channel, and
// no command line shows it: not the remote command (it used to be `env -i
// 'MY_API_TOKEN=...' ...`, in the remote host's process list), not any process of the job.
TEST_F(Sshd, EnvironmentTravelsOverTheChannel) {
  std::string token = unique_token();
  std::string value = "tok-" + unique_token();
  std::vector<std::string> args = run_args(token, dir_.path + "/known_hosts", false);
  args[args.size() - 2] = "400";  // nap 400 ms per slave chunk: time to look at the processes
  Proc p = Proc::start(args, dir_.path, {"MY_API_TOKEN=" + value});
  bool seen_program = false;
  std::string leaked;
  for (int i = 0; i < 200 && leaked.empty(); ++i) {
    for (pid_t pid : processes_with(token)) {
      std::vector<std::string> argv = cmdline(pid);
      for (const std::string& a : argv)
        if (a.find(value) != std::string::npos) leaked = a;
      // A remote slave's program: its parent is a node started with --env-stdin.
      std::vector<std::string> parent = cmdline(parent_of(pid));
      bool remote = std::find(parent.begin(), parent.end(), "--env-stdin") != parent.end();
      if (remote && !argv.empty() && argv[0] == FIG3) {
        std::string env = read_file("/proc/" + std::to_string(pid) + "/environ");
        if (env.find("MY_API_TOKEN=" + value + std::string(1, '\0')) != std::string::npos) seen_program = true;
      }
    }
    std::this_thread::sleep_for(20ms);
    if (seen_program && i > 20) break;
  }
  EXPECT_EQ(leaked, "") << "on a command line";
  EXPECT_TRUE(seen_program) << "no remote program with MY_API_TOKEN in its environment";
  EXPECT_EQ(p.wait(90s), 0) << p.err();
  std::string commands = read_file(dir_.path + "/commands.log");
  EXPECT_NE(commands.find("'node' '--rank' '2'"), std::string::npos) << commands;
  EXPECT_EQ(commands.find(value), std::string::npos) << commands;
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

TEST_F(Sshd, UnknownHostKeyIsRefusedUnlessAccepted) {
  std::string token = unique_token();
  std::string empty = dir_.path + "/empty_known_hosts";
  std::ofstream(empty).flush();
  Proc p = Proc::start(run_args(token, empty, false), dir_.path);
  EXPECT_NE(p.wait(60s), 0);
  EXPECT_NE(p.err().find("not in known_hosts"), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("--accept-new-host-keys"), std::string::npos) << p.err();
  EXPECT_TRUE(wait_until_gone(token, 10s));
  Proc q = Proc::start(run_args(token, empty, true), dir_.path);
  EXPECT_EQ(q.wait(90s), 0) << q.err();
  EXPECT_NE(read_file(empty).find("127.0.0.1"), std::string::npos);
}

TEST_F(Sshd, ChangedHostKeyIsRefused) {
  std::string token = unique_token();
  std::string wrong = dir_.path + "/wrong_known_hosts";
  Proc g = Proc::start({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir_.path + "/other"}, dir_.path);
  ASSERT_EQ(g.wait(30s), 0);
  std::ofstream(wrong) << "[127.0.0.1]:" << port_ << " " << read_file(dir_.path + "/other.pub");
  Proc p = Proc::start(run_args(token, wrong, true), dir_.path);
  EXPECT_NE(p.wait(60s), 0);
  EXPECT_NE(p.err().find("CHANGED"), std::string::npos) << p.err();
}

}  // namespace
}  // namespace cape::net::test
