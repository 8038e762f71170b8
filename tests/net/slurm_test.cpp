// `srun -n 3 cape node ...` on a private single-host Slurm cluster that the test starts on
// 127.0.0.1: a munge key and munged in a temporary directory, a generated slurm.conf
// (SlurmUser=root, one node "capenode" at 127.0.0.1 with 4 CPUs whatever the hardware says,
// proctrack/linuxproc, task/none, no cgroup plugin, no accounting), slurmctld and slurmd in
// the foreground (-D). Everything is torn down at the end: the jobs are cancelled, the daemons
// stopped, and any process still holding a file or its cwd in the directory is killed (and
// the test fails). Skipped when not root or when Slurm/munge are not installed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "job_util.h"

namespace cape::net::test {
namespace {

using namespace std::chrono_literals;

const char* const kNode = "capenode";

bool on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    size_t colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && ::access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

std::string short_hostname() {
  char b[256] = {};
  if (::gethostname(b, sizeof b - 1) != 0) return "localhost";
  std::string h = b;
  return h.substr(0, h.find('.'));
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class Slurm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "the private cluster runs with SlurmUser=root: run as root";
    for (const char* d : {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"})
      if (::access(d, X_OK) != 0) GTEST_SKIP() << "no " << d << " (slurmd slurmctld munge)";
    for (const char* c : {"srun", "sinfo", "squeue", "scancel"})
      if (!on_path(c)) GTEST_SKIP() << "no " << c << " on PATH (slurm-client)";
    const std::string& t = dir_.path;
    // Run from inside a Slurm job, srun would try to use that job's allocation here.
    std::vector<std::string> inherited;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "SLURM_", 6) == 0) inherited.emplace_back(*e, std::strcspn(*e, "="));
    for (const auto& name : inherited) ::unsetenv(name.c_str());
    env_ = {"SLURM_CONF=" + t + "/slurm.conf"};

    // munge: a fresh key, its socket and files in the directory (--force: /tmp is
    // world-writable, which munged otherwise refuses for its socket's parents).
    ASSERT_EQ(::mkdir((t + "/munge").c_str(), 0700), 0);
    {
      std::ifstream rnd("/dev/urandom", std::ios::binary);
      std::string key(1024, '\0');
      rnd.read(key.data(), static_cast<std::streamsize>(key.size()));
      std::ofstream(t + "/munge/munge.key", std::ios::binary) << key;
      ASSERT_EQ(::chmod((t + "/munge/munge.key").c_str(), 0400), 0);
    }
    const std::string sock = t + "/munge/munge.socket";
    munged_ = Proc::start({"/usr/sbin/munged", "--foreground", "--force", "--key-file=" + t + "/munge/munge.key",
                           "--socket=" + sock, "--pid-file=" + t + "/munge/munged.pid",
                           "--log-file=" + t + "/munge/munged.log", "--seed-file=" + t + "/munge/munged.seed"},
                          t);
    for (int i = 0; i < 500 && ::access(sock.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(20ms);
    ASSERT_EQ(::access(sock.c_str(), F_OK), 0) << "munged did not start:\n" << munged_.err();

    for (const char* d : {"/state", "/spool", "/log"}) ASSERT_EQ(::mkdir((t + d).c_str(), 0755), 0);
    int ctld_port = free_port(), slurmd_port = free_port();
    while (slurmd_port == ctld_port) slurmd_port = free_port();
    // No cgroup anything: proctrack/linuxproc finds a step's processes by parentage, task/none
    // binds nothing, and without cgroup plugins cgroup.conf is never read. config_overrides:
    // the node has the configured 4 CPUs even on a 2-CPU machine (3 tasks, oversubscribed).
    std::ofstream(t + "/slurm.conf")
        << "ClusterName=capetest\n"
        << "SlurmctldHost=" << short_hostname() << "(127.0.0.1)\n"
        << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << sock << "\n"
        << "StateSaveLocation=" << t << "/state\nSlurmdSpoolDir=" << t << "/spool\n"
        << "SlurmctldPidFile=" << t << "/slurmctld.pid\nSlurmdPidFile=" << t << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << t << "/log/slurmctld.log\nSlurmdLogFile=" << t << "/log/slurmd.log\n"
        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
        << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
        << "JobCompType=jobcomp/none\nSwitchType=switch/none\nMpiDefault=none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
        << "SlurmdParameters=config_overrides\nReturnToService=2\nMailProg=/bin/true\n"
        << "NodeName=" << kNode << " NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN\n"
        << "PartitionName=cape Nodes=" << kNode
        << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
    const std::string conf = t + "/slurm.conf";
    ctld_ = Proc::start({"/usr/sbin/slurmctld", "-D", "-c", "-f", conf}, t, env_);
    slurmd_ = Proc::start({"/usr/sbin/slurmd", "-D", "-N", kNode, "-f", conf}, t, env_);
    // Up when the node is idle (slurmd registered with the controller).
    std::string state;
    for (int i = 0; i < 150 && state != "idle"; ++i) {
      if (i) std::this_thread::sleep_for(200ms);
      Proc s = Proc::start({"sinfo", "-h", "-n", kNode, "-o", "%t"}, t, env_);
      s.wait(10s);
      state = trim(s.out());
    }
    ASSERT_EQ(state, "idle") << "slurmctld:\n" << ctld_.err() << read_file(t + "/log/slurmctld.log")
                             << "\nslurmd:\n" << slurmd_.err() << read_file(t + "/log/slurmd.log");
  }

  void TearDown() override {
    const std::string& t = dir_.path;
    if (ctld_.pid() > 0) {
      // Cancel whatever a failed test left, and wait until the controller has no job.
      Proc c = Proc::start({"scancel", "-p", "cape"}, t, env_);
      c.wait(10s);
      for (int i = 0; i < 75; ++i) {
        Proc q = Proc::start({"squeue", "-h", "-o", "%i"}, t, env_);
        q.wait(10s);
        if (trim(q.out()).empty()) break;
        std::this_thread::sleep_for(200ms);
      }
    }
    for (Proc* d : {&slurmd_, &ctld_, &munged_})
      if (d->pid() > 0) {
        ::kill(d->pid(), SIGTERM);
        d->wait(15s);
      }
    // slurmstepd runs in its own session, reparented to init, logging into our directory:
    // anything still holding a file there is a leftover of this cluster.
    // It ends on its own shortly after its step; give it a bounded moment.
    std::vector<pid_t> left = processes_using(t);
    for (int i = 0; i < 100 && !left.empty(); ++i) {
      std::this_thread::sleep_for(100ms);
      left = processes_using(t);
    }
    for (pid_t p : left) ::kill(p, SIGKILL);
    EXPECT_TRUE(left.empty()) << left.size() << " process(es) of the private cluster were left";
  }

  // srun with the private cluster's configuration, in the directory.
  Proc srun(const std::vector<std::string>& args) {
    std::vector<std::string> a = {"srun"};
    a.insert(a.end(), args.begin(), args.end());
    return Proc::start(a, dir_.path, env_);
  }

  // A job secret file, mode 600 (cape refuses anything looser).
  std::string secret_file() {
    std::string f = dir_.path + "/secret";
    std::ofstream(f) << std::string(64, 's') << "\n";
    EXPECT_EQ(::chmod(f.c_str(), 0600), 0);
    return f;
  }

  TempDir dir_;
  std::vector<std::string> env_;
  Proc munged_, ctld_, slurmd_;
};

TEST_F(Slurm, ThreeNodeJob) {
  std::string token = unique_token();
  int port = free_port();
  Proc p = srun({"-n", "3", CAPE_BIN, "node", "--master", "127.0.0.1:" + std::to_string(port),
                 "--secret-file", secret_file(), "--output-dir", dir_.path + "/logs", "--", FIG3, "2",
                 "0", token});
  EXPECT_EQ(p.wait(90s), 0) << p.err() << "\nslurmd:\n" << read_file(dir_.path + "/log/slurmd.log");
  // srun merges the tasks' stdout: only rank 0's program prints here.
  EXPECT_EQ(p.out(), "fig3 node=0 nodes=3 regions=2 sum=45796212736 ok\n") << p.err();
  EXPECT_EQ(read_file(dir_.path + "/logs/node.1.log"), "fig3 node=1 nodes=3 regions=2 sum=45796212736 ok\n");
  EXPECT_EQ(read_file(dir_.path + "/logs/node.2.log"), "fig3 node=2 nodes=3 regions=2 sum=45796212736 ok\n");
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

// A slave's program exits with 5 mid-region: every node exits with 5, so srun does too.
TEST_F(Slurm, SlaveFailureGivesItsStatus) {
  std::string token = unique_token();
  int port = free_port();
  Proc p = srun({"-n", "3", CAPE_BIN, "node", "--master", "127.0.0.1:" + std::to_string(port),
                 "--secret-file", secret_file(), "--output-dir", dir_.path + "/logs", "--", FIG3, "2",
                 "0", token, "fail=2:5"});
  EXPECT_EQ(p.wait(90s), 5) << p.err();
  EXPECT_NE(p.err().find("node 2 ("), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("(job exit status 5)"), std::string::npos) << p.err();
  EXPECT_TRUE(wait_until_gone(token, 10s));
}

}  // namespace
}  // namespace cape::net::test
