// Multithreaded programs under `cape monitor` (issue 13): threads started, running and
// exiting inside windows, write faults from every thread at once, signals to any thread,
// libgomp's pool living across windows. Every window's checkpoint must hold exactly the words
// the threads wrote (tests/programs/threads_window.c says which), nothing of the threads'
// stacks, TLS, DTVs or libgomp's state, under each tracker.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckpt/checkpoint.h"
#include "ckpt/format.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result run(const std::vector<std::string>& argv, const std::string& dir) {
  std::string out = dir + "/stdout", err = dir + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(120);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(121);
  }
  Result r;
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

uint64_t hex_after(const std::string& out, const std::string& key) {
  auto pos = ("\n" + out).find("\n" + key + " ");
  if (pos == std::string::npos) return 0;
  return std::stoull(out.substr(pos + key.size()), nullptr, 16);
}

struct Case {
  std::string tracker, mode;
  int rounds;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.tracker << " " << c.mode << " " << c.rounds; }

class MonitorThreads : public ::testing::TestWithParam<Case> {};

// Round r of threads_window.c writes (r + 1) << 32 | i into word i, for every i with
// (i + r) % 5 != 0; the other words keep their value. The checkpoint of round r holds every
// written word with that value and no other byte below the main stack (whose frames above
// the runtime call may hold main's locals).
TEST_P(MonitorThreads, EveryCheckpointHoldsExactlyTheWritesMade) {
  const Case& c = GetParam();
  char tmpl[] = "/tmp/cape-threads-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl, keep = dir + "/keep";
  std::string prog = std::string(CAPE_PROG_DIR) + (c.mode == "omp" ? "/capeprog_threads_window_omp" : "/capeprog_threads_window");
  Result r = run({CAPE_BIN, "monitor", "--tracker", c.tracker, "--keep-checkpoints", keep, "--", prog, c.mode,
                  std::to_string(c.rounds)},
                 dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_NE(r.out.find("\nok\n"), std::string::npos) << r.out;
  uint64_t words = hex_after(r.out, "words"), stack = hex_after(r.out, "stack");
  uint64_t count = std::stoull(r.out.substr(r.out.find("count ") + 6));
  ASSERT_NE(words, 0u);
  ASSERT_EQ(count, 16u * 512);
  uint64_t stack_lo = (stack & ~uint64_t{4095}) - 65536;
  std::vector<uint64_t> mem(count, 0);
  for (int round = 0; round < c.rounds; round++) {
    std::string file = keep + "/0." + std::to_string(round + 1) + ".w" + std::to_string(round) + ".dickpt";
    auto ck = cape::ckpt::read_file(file);
    SCOPED_TRACE(file);
    size_t bad = 0;
    for (uint64_t i = 0; i < count; i++) {
      bool written = (i + round) % 5 != 0;
      uint64_t want = written ? (uint64_t(round + 1) << 32 | i) : mem[i];
      uint64_t got = 0;
      int present = 0;
      for (int b = 0; b < 8; b++) {
        const uint8_t* p = ck.at(words + 8 * i + b);
        uint8_t byte = p ? *p : static_cast<uint8_t>(mem[i] >> (8 * b));
        present += p != nullptr;
        got |= uint64_t{byte} << (8 * b);
      }
      if (got != want || (!written && present)) {
        if (++bad <= 5)
          ADD_FAILURE() << "round " << round << " word " << i << ": 0x" << std::hex << got << " want 0x" << want
                        << (written ? "" : " (not written in this round)");
      }
      mem[i] = want;
    }
    ASSERT_EQ(bad, 0u);
    for (const auto& run : ck.runs) {
      if (run.address >= stack_lo) continue;
      EXPECT_TRUE(run.address >= words && run.end() <= words + 8 * count)
          << "round " << round << ": a run outside the threads' words at 0x" << std::hex << run.address << " ("
          << std::dec << run.length << " bytes)";
    }
  }
  EXPECT_GT(hex_after(r.out, "ticks"), 0u);  // signals did arrive
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Trackers, MonitorThreads,
    ::testing::Values(Case{"uffd", "pthread", 20}, Case{"mprotect", "pthread", 20}, Case{"full", "pthread", 20},
                      Case{"uffd", "omp", 20}, Case{"mprotect", "omp", 20}, Case{"full", "omp", 20},
                      Case{"inproc", "pthread", 20}, Case{"inproc", "omp", 20},
                      // The stress test: 4 threads, interleaved words, 500 regions, signals.
                      Case{"uffd", "omp", 500}, Case{"mprotect", "omp", 500}, Case{"inproc", "omp", 500}),
    [](const auto& info) {
      return info.param.tracker + "_" + info.param.mode + "_" + std::to_string(info.param.rounds);
    });

}  // namespace
