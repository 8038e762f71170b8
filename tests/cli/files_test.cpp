// The files cape reads and writes, against what a careless or hostile file system holds
// (issue 16, items 7, 8 and 10): the real `cape` and `cape-translate` binaries, real files,
// FIFOs, sparse files and symlinks, every run bounded in time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "ckpt/format.h"

namespace cape {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Outcome {
  int status = -1;  // exit code, 128 + signal when killed; -1 when it had to be stopped
  std::string out, err;
  double seconds = 0;
  long max_rss_kib = 0;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cape-files-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs argv with stdin from /dev/null; killed (and -1) after `bound`. `before_exec` runs
  // in the parent once the child exists and before it execs (it waits on a pipe), so that
  // a test can prepare a file named after the child's pid.
  Outcome run(const std::vector<std::string>& argv, std::chrono::milliseconds bound = 20s,
          const std::function<void(pid_t)>& before_exec = {}) {
    Outcome r;
    std::string out = path("run.out"), err = path("run.err");
    int go[2];
    EXPECT_EQ(::pipe2(go, O_CLOEXEC), 0);
    auto t0 = Clock::now();
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      char c;
      if (::read(go[0], &c, 1) != 1) _exit(126);
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int n = ::open("/dev/null", O_RDONLY);
      if (o < 0 || e < 0 || n < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::dup2(n, 0) < 0) _exit(126);
      if (::chdir(dir_.c_str()) != 0) _exit(126);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      _exit(127);
    }
    if (before_exec) before_exec(pid);
    EXPECT_EQ(::write(go[1], "g", 1), 1);
    ::close(go[0]);
    ::close(go[1]);
    int st = 0;
    rusage ru{};
    for (;;) {
      pid_t got = ::wait4(pid, &st, WNOHANG, &ru);
      if (got == pid) {
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        break;
      }
      if (Clock::now() - t0 > bound) {
        ::kill(-pid, SIGKILL);
        ::wait4(pid, &st, 0, &ru);
        r.status = -1;
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.max_rss_kib = ru.ru_maxrss;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path dir_;
};

ckpt::Checkpoint small_checkpoint() {
  ckpt::Checkpoint c;
  c.name = "after";
  c.append(0x1000, std::vector<uint8_t>(64, 7), 1);
  return c;
}

// Item 8: a FIFO does not block, a directory is refused, whatever the reader.
TEST_F(Files, FifosAndDirectoriesAreRefusedNotWaitedOn) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  fs::create_directories(path("dir"));
  for (const std::string& f : {path("pipe"), path("dir")}) {
    bool fifo = f == path("pipe");
    std::string kind = fifo ? "a FIFO" : "a directory";
    for (const char* sub : {"verify", "dump", "stat"}) {
      Outcome r = run({CAPE_BINARY, "ckpt", sub, f}, 10s);
      EXPECT_EQ(r.status, 1) << sub << " " << f << ": " << r.err;
      EXPECT_NE(r.err.find(f + ": not a regular file (" + kind + ")"), std::string::npos) << r.err;
    }
    Outcome r = run({CAPE_BINARY, "ckpt", "merge", f, f, "-o", path("m.dickpt")}, 10s);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
    r = run({CAPE_BINARY, "monitor", "--load", "x=" + f, "--", "/bin/true"}, 10s);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("--load x=" + f + ": " + f + ": not a regular file (" + kind + ")"), std::string::npos)
        << r.err;
    r = run({CAPE_TRANSLATE, f}, 10s);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "cape-translate: cannot read '" + f + "': " +
                         (fifo ? "not a regular file" : "it is a directory") + "\n");
  }
}

// Item 8: a file is judged by its header before it is read: a 64 GiB sparse file, a 1 GiB
// file of garbage, and a real header on a file of the wrong size are refused at once, in
// little memory.
TEST_F(Files, HugeAndGarbageFilesAreRefusedFromTheirHeader) {
  // 64 GiB of holes (zeros).
  {
    int fd = ::open(path("sparse").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{64} << 30), 0);
    ::close(fd);
  }
  // A real checkpoint's header, then 64 GiB of holes: its sizes do not add up.
  {
    std::vector<uint8_t> bytes = ckpt::serialize(small_checkpoint());
    int fd = ::open(path("big-header").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ASSERT_EQ(::ftruncate(fd, off_t{64} << 30), 0);
    ::close(fd);
  }
  // 1 GiB of random bytes, really written.
  {
    std::ofstream out(path("garbage"), std::ios::binary);
    std::mt19937_64 rng(16);
    std::vector<uint64_t> chunk(1 << 17);
    for (int i = 0; i < 1024; ++i) {
      for (auto& w : chunk) w = rng();
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk.size() * 8));
    }
    ASSERT_TRUE(out.good());
  }
  struct Case {
    std::string file, why;
  };
  for (const Case& c : {Case{path("sparse"), "not a DICKPT checkpoint (bad magic)"},
                        Case{path("big-header"), "but its header declares"},
                        Case{path("garbage"), "not a DICKPT checkpoint (bad magic)"}}) {
    for (const char* sub : {"verify", "stat"}) {
      Outcome r = run({CAPE_BINARY, "ckpt", sub, c.file}, 60s);
      EXPECT_EQ(r.status, 1) << sub << " " << c.file << ": " << r.err;
      EXPECT_NE(r.err.find(c.file + ": " + (c.why == "but its header declares" ? "" : c.why)), std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
      // From the header: well under a second, and nothing near the file's size in memory.
      EXPECT_LT(r.seconds, 2.0) << sub << " " << c.file;
      EXPECT_LT(r.max_rss_kib, 64 * 1024) << sub << " " << c.file;
    }
    Outcome r = run({CAPE_BINARY, "monitor", "--load", "x=" + c.file, "--", "/bin/true"}, 60s);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 2.0);
  }
  // A good file next to them still reads.
  ckpt::write_file(small_checkpoint(), path("good.dickpt"));
  Outcome r = run({CAPE_BINARY, "ckpt", "verify", path("good.dickpt")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, path("good.dickpt") + ": ok (delta, 1 runs, 64 bytes)\n");
}

// Item 5: a checkpoint's name is the file's content: `dump` prints it escaped, so it can
// neither forge a line nor send escapes to the terminal.
TEST_F(Files, DumpEscapesTheCheckpointName) {
  ckpt::Checkpoint c = small_checkpoint();
  c.name = "x\ncape: forged line\x1b[31m red";
  ckpt::write_file(c, path("evil.dickpt"));
  Outcome r = run({CAPE_BINARY, "ckpt", "dump", path("evil.dickpt")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("checkpoint 'x\\x0acape: forged line\\x1b[31m red'\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find("\ncape: forged"), std::string::npos);
}

// Item 7: --keep-checkpoints never opens a name someone planted (the temporary name of the
// old code was DIR/<final name>.tmp.<pid>), writes mode 0600 files in a 0700 directory,
// and replaces a symlink at a final name instead of writing through it.
TEST_F(Files, KeptCheckpointsDoNotFollowPlantedSymlinks) {
  std::string victim = path("victim"), keep = path("keep");
  {
    std::ofstream(victim) << "precious\n";
  }
  ASSERT_EQ(::mkdir(keep.c_str(), 0700), 0);
  // fig3 on one node makes 0.1.final, 0.2.after, ... (sequence numbers from 1).
  std::vector<std::string> finals;
  for (int seq = 1; seq <= 6; ++seq)
    for (const char* name : {"final", "after", "before"})
      finals.push_back(keep + "/0." + std::to_string(seq) + "." + name + ".dickpt");
  Outcome r = run({CAPE_BINARY, "monitor", "--keep-checkpoints", keep, "--", FIG3, "2"}, 60s, [&](pid_t pid) {
    for (const std::string& f : finals) {
      ASSERT_EQ(::symlink(victim.c_str(), (f + ".tmp." + std::to_string(pid)).c_str()), 0);
      if (f.find("0.2.after") != std::string::npos) {
        ASSERT_EQ(::symlink(victim.c_str(), f.c_str()), 0);
      }
    }
  });
  EXPECT_NE(r.status, -1);
  EXPECT_EQ(slurp(victim), "precious\n");
  int kept = 0;
  for (const auto& e : fs::directory_iterator(keep)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) continue;  // the planted links themselves
    ++kept;
    struct stat st;
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << name << " is not a regular file";
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
    EXPECT_NO_THROW(ckpt::read_file(e.path().string())) << name;
  }
  EXPECT_GE(kept, 4);
  // A directory cape makes is 0700.
  r = run({CAPE_BINARY, "monitor", "--keep-checkpoints", path("fresh"), "--", FIG3, "1"}, 60s);
  struct stat st;
  ASSERT_EQ(::stat(path("fresh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A path that is not a directory is refused, not replaced.
  { std::ofstream(path("plain")) << "x"; }
  r = run({CAPE_BINARY, "monitor", "--keep-checkpoints", path("plain"), "--", FIG3, "1"}, 60s);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--keep-checkpoints: " + path("plain") + " exists and is not a directory"), std::string::npos)
      << r.err;
}

// Item 10: the program killed while its monitor works in it (a 128 MiB checkpoint made and
// injected round after round) ends as any killed program: status 137 and the usual message,
// never "monitor error: ...: No such process".
TEST_F(Files, ProgramKilledUnderTheMonitorEndsWith137) {
  std::mt19937 rng(10);
  for (int i = 0; i < 8; ++i) {
    auto delay = std::chrono::milliseconds(300 + rng() % 1500);
    pid_t monitor_pid = -1;
    std::thread killer;
    Outcome r = run({CAPE_BINARY, "monitor", "--", BIG_CKPT, "128", "40"}, 120s, [&](pid_t pid) {
      monitor_pid = pid;
      killer = std::thread([pid, delay] {
        // The program is the monitor's child; the delay counts from its start (on a loaded
        // machine the monitor took longer than the delay to start it, which then ran to its end).
        auto child = [pid] {
          std::ifstream kids("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
          pid_t c = 0;
          return kids >> c ? c : pid_t{0};
        };
        for (auto until = std::chrono::steady_clock::now() + 30s;
             child() <= 0 && std::chrono::steady_clock::now() < until;)
          std::this_thread::sleep_for(5ms);
        std::this_thread::sleep_for(delay);
        if (pid_t c = child(); c > 0) ::kill(c, SIGKILL);
      });
    });
    killer.join();
    EXPECT_EQ(r.status, 137) << "kill after " << delay.count() << " ms: " << r.err;
    EXPECT_EQ(r.err, "cape: the program was killed by signal 9 (Killed)\n") << "kill after " << delay.count() << " ms";
  }
}

}  // namespace
}  // namespace cape
