// `cape monitor` on real programs (tests/programs), once per tracker. The programs list
// what they wrote ("expect CK TAG ADDR HEX"); the checkpoints kept with
// --keep-checkpoints must hold exactly that (the stack may hold more of main's own frame).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ckpt/checkpoint.h"
#include "ckpt/format.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;  // exit code, or 128 + signal
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cape-monitor-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) std::abort();
    path_ = d;
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

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

std::string prog(const std::string& name) { return std::string(CAPE_PROG_DIR) + "/capeprog_" + name; }

struct Expect {
  std::string ck, tag;
  uint64_t addr = 0;
  std::vector<uint8_t> bytes, old;
};

std::vector<Expect> parse_expects(const std::string& out) {
  std::vector<Expect> v;
  std::istringstream in(out);
  std::string word;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    if (!(l >> word) || word != "expect") continue;
    Expect e;
    std::string addr, hex, old;
    l >> e.ck >> e.tag >> addr >> hex >> old;
    e.addr = std::stoull(addr, nullptr, 16);
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      e.bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
      e.old.push_back(static_cast<uint8_t>(std::stoul(old.substr(i, 2), nullptr, 16)));
    }
    v.push_back(e);
  }
  return v;
}

uint64_t value_after(const std::string& out, const std::string& key) {
  auto pos = out.find("\n" + key + " ");
  if (pos == std::string::npos) return 0;
  return std::stoull(out.substr(pos + key.size() + 2), nullptr, 16);
}

// The byte the checkpoint holds at `a`, or -1.
int byte_at(const cape::ckpt::Checkpoint& c, uint64_t a) {
  const uint8_t* p = c.at(a);
  return p ? *p : -1;
}

// Every byte `ck` changed is in `c` with its new value; a byte written with the value it
// already had may be carried inside a run (word granularity) but then with that value.
void check_expected_present(const cape::ckpt::Checkpoint& c, const std::vector<Expect>& ex,
                            const std::string& ck) {
  std::map<uint64_t, std::pair<uint8_t, uint8_t>> want;  // address -> (first old, last new)
  for (const Expect& e : ex)
    if (e.ck == ck)
      for (size_t i = 0; i < e.bytes.size(); i++) {
        auto it = want.find(e.addr + i);
        if (it == want.end())
          want[e.addr + i] = {e.old[i], e.bytes[i]};
        else
          it->second.second = e.bytes[i];
      }
  ASSERT_FALSE(want.empty()) << ck;
  for (auto [a, v] : want) {
    int got = byte_at(c, a);
    if (v.first != v.second || got >= 0) {
      EXPECT_EQ(got, v.second) << ck << " at 0x" << std::hex << a;
    }
  }
}

// Every run below `stack_lo` lies in the 8-byte words of some expected write of `ck`.
void check_nothing_extra(const cape::ckpt::Checkpoint& c, const std::vector<Expect>& ex,
                         const std::string& ck, uint64_t stack_lo, const std::string& skip_tag = "") {
  std::vector<std::pair<uint64_t, uint64_t>> words;
  for (const Expect& e : ex)
    if (e.ck == ck) words.emplace_back(e.addr & ~uint64_t{7}, (e.addr + e.bytes.size() + 7) & ~uint64_t{7});
  for (const auto& r : c.runs) {
    if (r.address >= stack_lo) continue;
    bool skip = false;
    for (const Expect& e : ex)
      if (!skip_tag.empty() && e.tag == skip_tag && (r.address >> 20) == (e.addr >> 20)) skip = true;
    if (skip) continue;
    for (uint64_t a = r.address; a < r.end(); a++) {
      if (!c.at(a)) continue;  // a word a masked run does not mark
      bool ok = false;
      for (auto [s, e] : words) ok = ok || (a >= s && a < e);
      EXPECT_TRUE(ok) << ck << ": unexpected byte at 0x" << std::hex << a << " (run 0x" << r.address
                      << ", " << std::dec << r.length << " bytes)";
      if (!ok) break;
    }
  }
}

class Monitor : public ::testing::TestWithParam<std::string> {
 protected:
  std::string tracker() const { return GetParam(); }
  Result monitor(std::vector<std::string> args, const std::string& dir) {
    std::vector<std::string> argv = {CAPE_BIN, "monitor", "--tracker", tracker()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, dir);
  }
  TempDir tmp;
};

TEST_P(Monitor, KnownWritesInEveryRegionAndTwoCreatesSplitThem) {
  std::string keep = tmp.path() + "/keep";
  Result r = monitor({"--keep-checkpoints", keep, "--", prog("patterns"), "produce"}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Expect> ex = parse_expects(r.out);
  ASSERT_GE(ex.size(), 12u);
  uint64_t stack_lo = (value_after(r.out, "stack") & ~uint64_t{4095}) - 65536;
  auto first = cape::ckpt::read_file(keep + "/0.1.first.dickpt");
  auto second = cape::ckpt::read_file(keep + "/0.2.second.dickpt");
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(second.sequence, 2u);
  EXPECT_EQ(first.load_base, 0x555555554000u);  // ADDR_NO_RANDOMIZE, PIE
  check_expected_present(first, ex, "first");
  check_expected_present(second, ex, "second");
  check_nothing_extra(first, ex, "first", stack_lo);
  check_nothing_extra(second, ex, "second", stack_lo);
  // The canary array was never written.
  uint64_t canary = value_after(r.out, "canary");
  ASSERT_NE(canary, 0u);
  for (const auto& c : {first, second})
    for (const auto& run : c.runs) EXPECT_FALSE(run.address < canary + 4096 && run.end() > canary);
  // Each region of the tracked set appears.
  for (std::string tag : {"data", "bss", "heap", "mmap", "stack"}) {
    bool seen = false;
    for (const Expect& e : ex) seen = seen || (e.tag == tag && byte_at(e.ck == "first" ? first : second, e.addr) == e.bytes[0]);
    EXPECT_TRUE(seen) << tag;
  }
}

TEST_P(Monitor, InjectIntoASecondRunReproducesTheMemory) {
  std::string keep = tmp.path() + "/keep";
  Result p = monitor({"--keep-checkpoints", keep, "--", prog("patterns"), "produce"}, tmp.path());
  ASSERT_EQ(p.status, 0) << p.err;
  Result c = monitor({"--load", "first=" + keep + "/0.1.first.dickpt", "--load",
                      "second=" + keep + "/0.2.second.dickpt", "--", prog("patterns"), "consume"},
                     tmp.path());
  EXPECT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("consume ok"), std::string::npos) << c.out;
}

TEST_P(Monitor, FourThreadsWriting) {
  std::string keep = tmp.path() + "/keep";
  Result r = monitor({"--keep-checkpoints", keep, "--", prog("threads")}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Expect> ex = parse_expects(r.out);
  ASSERT_EQ(ex.size(), 4u * 2 * ((3000 + 28) / 29));
  auto all = cape::ckpt::read_file(keep + "/0.1.all.dickpt");
  check_expected_present(all, ex, "all");
  // pthread_create may allocate on the heap: only the .bss must be exact.
  check_nothing_extra(all, ex, "all", 0x7ff000000000, "heap");
}

TEST_P(Monitor, RealSegfaultGetsAReportAndTheSignalStatus) {
  Result r = monitor({"--", prog("crash")}, tmp.path());
  EXPECT_EQ(r.status, 128 + 11);
  EXPECT_NE(r.err.find("killed by signal 11 (SIGSEGV"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at address 0x10"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("crash_here"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("main"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sleeper_thread"), std::string::npos) << r.err;  // the other thread
}

TEST_P(Monitor, OwnSigsegvHandlerGetsItsOwnFaultsOnly) {
  std::string keep = tmp.path() + "/keep";
  Result r = monitor({"--keep-checkpoints", keep, "--", prog("own_segv")}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("faults 3"), std::string::npos) << r.out;
  auto after = cape::ckpt::read_file(keep + "/0.1.after.dickpt");
  check_expected_present(after, parse_expects(r.out), "after");
}

TEST_P(Monitor, ExitStatusAndSignalsPassThrough) {
  EXPECT_EQ(monitor({"--", "/bin/sh", "-c", "exit 7"}, tmp.path()).status, 7);
  EXPECT_EQ(monitor({"--", "/bin/sh", "-c", "kill -TERM $$"}, tmp.path()).status, 128 + 15);
  Result r = monitor({"--", "/nonexistent/program"}, tmp.path());
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cannot run /nonexistent/program"), std::string::npos) << r.err;
}

TEST_P(Monitor, InjectRefusesRunsOutsideTrackedMemory) {
  cape::ckpt::Checkpoint bad;
  bad.name = "first";
  std::vector<uint8_t> bytes(8, 0x41);
  bad.append(0x555555554000, bytes, 0);  // the executable's read-only ELF header
  std::string file = tmp.path() + "/bad.dickpt";
  cape::ckpt::write_file(bad, file);
  cape::ckpt::Checkpoint empty;
  std::string empty_file = tmp.path() + "/empty.dickpt";
  cape::ckpt::write_file(empty, empty_file);
  Result r = monitor({"--load", "first=" + file, "--load", "second=" + empty_file, "--",
                      prog("patterns"), "consume"}, tmp.path());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find("outside the program's tracked writable memory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("consume"), std::string::npos);  // killed before it could check
}

TEST_P(Monitor, InjectOfAnUnknownCheckpointIsAClearError) {
  Result r = monitor({"--", prog("patterns"), "consume"}, tmp.path());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("inject(\"first\"): no checkpoint of that name"), std::string::npos) << r.err;
}

// Handled signals arriving all the time while pages are written: with the mprotect
// tracker many reach a thread between its fault and the resume stub's return (the
// monitor finishes the stub first so the handler runs on the program's stack). The program
// checks its memory; the checkpoints hold every page's last value.
TEST_P(Monitor, HandledSignalsDuringWriteFaults) {
  std::string keep = tmp.path() + "/keep";
  Result r = monitor({"--keep-checkpoints", keep, "--", CAPE_SIGNAL_VICTIM}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\nok\n"), std::string::npos) << r.out;
  EXPECT_GT(value_after("\n" + r.out, "ticks"), 0u) << r.out;  // (hex parse: only > 0 matters)
  uint64_t buf = value_after("\n" + r.out, "buf");
  ASSERT_NE(buf, 0u);
  auto first = cape::ckpt::read_file(keep + "/0.1.first.dickpt");
  auto after = cape::ckpt::read_file(keep + "/0.2.after.dickpt");
  // The word at `a` after applying `c` to memory that held `before` there (runs carry
  // only the bytes that changed).
  auto word_at = [](const cape::ckpt::Checkpoint& c, uint64_t a, uint64_t before) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
      int b = byte_at(c, a + i);
      v = v << 8 | (b < 0 ? (before >> (8 * i)) & 0xff : static_cast<uint64_t>(b));
    }
    return v;
  };
  for (uint64_t p = 0; p < 2048; p++) {
    ASSERT_EQ(word_at(first, buf + p * 4096 + 8, 0), p + 1) << p;
    ASSERT_EQ(word_at(after, buf + p * 4096 + 8, p + 1), p + 3) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Trackers, Monitor, ::testing::Values("mprotect", "uffd", "full", "inproc"),
                         [](const auto& info) { return info.param; });

// The three trackers give the same checkpoints, address for address and byte for byte.
TEST(MonitorTrackers, IdenticalCheckpoints) {
  TempDir tmp;
  std::map<std::string, std::vector<cape::ckpt::Checkpoint>> got;
  for (std::string t : {"mprotect", "uffd", "full"}) {
    std::string keep = tmp.path() + "/" + t;
    Result r = run({CAPE_BIN, "monitor", "--tracker", t, "--keep-checkpoints", keep, "--",
                    prog("patterns"), "produce"}, tmp.path());
    ASSERT_EQ(r.status, 0) << t << r.err;
    got[t].push_back(cape::ckpt::read_file(keep + "/0.1.first.dickpt"));
    got[t].push_back(cape::ckpt::read_file(keep + "/0.2.second.dickpt"));
  }
  for (std::string t : {"mprotect", "uffd"}) {
    for (size_t i = 0; i < 2; i++) {
      const auto &a = got[t][i], &b = got["full"][i];
      ASSERT_EQ(a.runs.size(), b.runs.size()) << t;
      for (size_t k = 0; k < a.runs.size(); k++) {
        EXPECT_EQ(a.runs[k].address, b.runs[k].address) << t;
        EXPECT_EQ(a.runs[k].length, b.runs[k].length) << t;
      }
      EXPECT_EQ(a.bytes, b.bytes) << t;
    }
  }
}

// The trackers' variants (the ways before the one-stop stub, the neighbours and the
// program's copies, chosen with `cape monitor`'s variant flags) give the same checkpoints as
// `full`, and so does a four-thread program's .bss under each mprotect variant.
TEST(MonitorTrackers, VariantsGiveIdenticalCheckpoints) {
  TempDir tmp;
  struct Variant {
    const char* tracker;
    std::vector<std::string> flags;
  };
  const std::vector<Variant> variants = {
      {"full", {}},
      {"mprotect", {"--mprotect-two-stops", "--mprotect-ahead", "1"}},
      {"mprotect", {"--mprotect-two-stops", "--mprotect-ahead", "16"}},
      {"mprotect", {"--mprotect-ahead", "1"}},
      {"mprotect", {"--mprotect-ahead", "256"}},
      {"uffd", {"--uffd-read", "--uffd-copy-threads", "1"}},
      {"uffd", {"--uffd-copy-threads", "5"}},
  };
  std::vector<std::vector<cape::ckpt::Checkpoint>> got;
  for (size_t v = 0; v < variants.size(); v++) {
    auto monitor = [&](const std::string& keep) {
      std::vector<std::string> argv = {CAPE_BIN, "monitor", "--tracker", variants[v].tracker, "--keep-checkpoints", keep};
      argv.insert(argv.end(), variants[v].flags.begin(), variants[v].flags.end());
      argv.push_back("--");
      return argv;
    };
    std::string keep = tmp.path() + "/" + std::to_string(v);
    std::vector<std::string> produce = monitor(keep);
    produce.insert(produce.end(), {prog("patterns"), "produce"});
    Result r = run(produce, tmp.path());
    std::string tkeep = keep + "-threads";
    std::vector<std::string> threads = monitor(tkeep);
    threads.push_back(prog("threads"));
    Result th = run(threads, tmp.path());
    ASSERT_EQ(r.status, 0) << v << r.err;
    ASSERT_EQ(th.status, 0) << v << th.err;
    got.push_back({cape::ckpt::read_file(keep + "/0.1.first.dickpt"),
                   cape::ckpt::read_file(keep + "/0.2.second.dickpt")});
    std::vector<Expect> ex = parse_expects(th.out);
    auto all = cape::ckpt::read_file(tkeep + "/0.1.all.dickpt");
    check_expected_present(all, ex, "all");
    check_nothing_extra(all, ex, "all", 0x7ff000000000, "heap");
  }
  for (size_t v = 1; v < variants.size(); v++)
    for (size_t i = 0; i < 2; i++) {
      const auto &a = got[v][i], &b = got[0][i];
      ASSERT_EQ(a.runs.size(), b.runs.size()) << v;
      for (size_t k = 0; k < a.runs.size(); k++) {
        EXPECT_EQ(a.runs[k].address, b.runs[k].address) << v;
        EXPECT_EQ(a.runs[k].length, b.runs[k].length) << v;
      }
      EXPECT_EQ(a.bytes, b.bytes) << v;
    }
}

// Memory changed between windows in every way (tests/programs/between.c: the program's,
// the kernel's and an inject's writes, areas grown, shrunk, replaced, dropped with
// MADV_DONTNEED, leaving the tracked set and coming back): each window's checkpoint holds
// exactly what the window wrote, under every tracker and variant, byte for byte as `full`.
// The `uffd` tracker keeps its copies between windows: a stale one shows as extra words.
TEST(MonitorTrackers, ChangesBetweenWindows) {
  TempDir tmp;
  const std::vector<std::vector<std::string>> variants = {
      {"full"}, {"uffd"}, {"uffd", "--uffd-copy-all"}, {"uffd", "--uffd-read"}, {"mprotect"}};
  const std::vector<std::string> names = {"w1", "w2", "w3", "w4", "w5"};
  std::vector<std::vector<cape::ckpt::Checkpoint>> got;
  for (size_t v = 0; v < variants.size(); v++) {
    std::string keep = tmp.path() + "/" + std::to_string(v);
    std::vector<std::string> argv = {CAPE_BIN, "monitor", "--tracker"};
    argv.insert(argv.end(), variants[v].begin(), variants[v].end());
    argv.insert(argv.end(), {"--keep-checkpoints", keep, "--", prog("between")});
    Result r = run(argv, tmp.path());
    ASSERT_EQ(r.status, 0) << variants[v][0] << " " << v << "\n" << r.out << r.err;
    std::vector<Expect> ex = parse_expects(r.out);
    uint64_t stack = value_after(r.out, "stack");
    ASSERT_NE(stack, 0u) << r.out;
    got.emplace_back();
    for (size_t i = 0; i < names.size(); i++) {
      // Only create() makes checkpoints here (inject makes none): wN is the N-th.
      auto c = cape::ckpt::read_file(keep + "/0." + std::to_string(i + 1) + "." + names[i] + ".dickpt");
      SCOPED_TRACE("variant " + std::to_string(v) + " (" + variants[v][0] + "), " + names[i]);
      check_expected_present(c, ex, names[i]);
      check_nothing_extra(c, ex, names[i], stack - 65536);
      got.back().push_back(std::move(c));
    }
  }
  for (size_t v = 1; v < variants.size(); v++)
    for (size_t i = 0; i < names.size(); i++) {
      const auto &a = got[v][i], &b = got[0][i];
      SCOPED_TRACE("variant " + std::to_string(v) + " (" + variants[v][0] + "), " + names[i]);
      ASSERT_EQ(a.runs.size(), b.runs.size());
      for (size_t k = 0; k < a.runs.size(); k++) {
        EXPECT_EQ(a.runs[k].address, b.runs[k].address);
        EXPECT_EQ(a.runs[k].length, b.runs[k].length);
      }
      EXPECT_EQ(a.bytes, b.bytes);
    }
}

// A 64 MiB .bss with 16 pages touched before the first window (tests/programs/big_bss.c):
// the window's checkpoint holds exactly its writes, in touched and never-touched pages,
// under every tracker; the `uffd` tracker's first start() reads only the populated pages
// (a byte count from its debug line, not a time: it read the whole .bss before).
TEST(MonitorTrackers, BigBssFirstWindow) {
  TempDir tmp;
  for (std::string t : {"full", "mprotect", "uffd"}) {
    SCOPED_TRACE(t);
    std::string keep = tmp.path() + "/" + t;
    Result r = run({CAPE_BIN, "monitor", "--tracker", t, "--log", "monitor:debug", "--keep-checkpoints", keep, "--",
                    prog("big_bss")},
                   tmp.path());
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    std::vector<Expect> ex = parse_expects(r.out);
    ASSERT_EQ(ex.size(), 4u + 512u) << r.out;
    const uint64_t lo = ex[0].addr & ~uint64_t{4095}, hi = lo + (64 << 20);
    for (std::string w : {"w1", "w2"}) {
      SCOPED_TRACE(w);
      auto c = cape::ckpt::read_file(keep + "/0." + (w == "w1" ? "1" : "2") + "." + w + ".dickpt");
      check_expected_present(c, ex, w);
      // Nothing else of the .bss (the stack and libc's data may hold other words).
      for (const auto& run : c.runs) {
        if (run.end() <= lo || run.address >= hi) continue;
        for (uint64_t a = std::max(run.address, lo); a < std::min(run.end(), hi); a++) {
          if (!c.at(a)) continue;
          bool ok = false;
          for (const Expect& e : ex) ok = ok || (e.ck == w && a >= (e.addr & ~uint64_t{7}) && a < e.addr + 8);
          EXPECT_TRUE(ok) << "unexpected byte at 0x" << std::hex << a;
          if (!ok) break;
        }
      }
    }
    if (t != "uffd") continue;
    auto at = r.err.find("uffd start(): ");
    ASSERT_NE(at, std::string::npos) << r.err;
    auto read_at = r.err.find("so far ", at);
    ASSERT_NE(read_at, std::string::npos) << r.err;
    uint64_t read = std::stoull(r.err.substr(read_at + 7));
    EXPECT_LT(read, uint64_t{8} << 20) << "the first start() read " << read << " bytes of a 64 MiB .bss with 16 pages used";
  }
}

// A dense input (3 pages of every 4 of a 16 MiB .bss) written before the first window and
// then only read, but for words written in later windows (tests/programs/dense_input.c): each
// window's checkpoint holds exactly its words, under every tracker, and under `uffd` with its
// copies in small pages (the default since session 13) or in huge pages where a 2 MiB block is
// filled whole (CAPE_UFFD_DENSE_HUGE=100, the rule before), half (50) or at all (1): a page
// whose copy was not its content shows whole, as changed.
TEST(MonitorTrackers, DenseInputLaterWrites) {
  TempDir tmp;
  struct Variant {
    std::string tracker, huge;
  };
  for (const Variant& v : {Variant{"full", ""}, Variant{"mprotect", ""}, Variant{"uffd", ""}, Variant{"uffd", "100"},
                           Variant{"uffd", "1"}, Variant{"uffd", "50"}}) {
    std::string name = v.tracker + (v.huge.empty() ? "" : "-huge" + v.huge);
    SCOPED_TRACE(name);
    std::string keep = tmp.path() + "/" + name;
    if (!v.huge.empty()) ::setenv("CAPE_UFFD_DENSE_HUGE", v.huge.c_str(), 1);
    Result r = run({CAPE_BIN, "monitor", "--tracker", v.tracker, "--keep-checkpoints", keep, "--", prog("dense_input")},
                   tmp.path());
    ::unsetenv("CAPE_UFFD_DENSE_HUGE");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    std::vector<Expect> ex = parse_expects(r.out);
    ASSERT_EQ(ex.size(), 3u + 1u + 1u + 4u + 100u) << r.out;
    const uint64_t lo = (ex[0].addr & ~uint64_t{4095}) - 4096, hi = lo + (16 << 20);  // (ex[0]: page 1)
    for (int i = 1; i <= 5; i++) {
      std::string w = "w" + std::to_string(i);
      SCOPED_TRACE(w);
      auto c = cape::ckpt::read_file(keep + "/0." + std::to_string(i) + "." + w + ".dickpt");
      if (i != 4) check_expected_present(c, ex, w);  // (w4 writes nothing)
      for (const auto& run : c.runs) {  // nothing else of the .bss
        if (run.end() <= lo || run.address >= hi) continue;
        for (uint64_t a = std::max(run.address, lo); a < std::min(run.end(), hi); a++) {
          if (!c.at(a)) continue;
          bool ok = false;
          for (const Expect& e : ex) ok = ok || (e.ck == w && a >= (e.addr & ~uint64_t{7}) && a < e.addr + 8);
          EXPECT_TRUE(ok) << "unexpected byte at 0x" << std::hex << a << " (page " << std::dec << (a - lo) / 4096 << ")";
          if (!ok) break;
        }
      }
    }
  }
}

TEST(MonitorRuntime, WithoutAMonitorTheFirstCallSaysHowToRun) {
  TempDir tmp;
  Result r = run({prog("patterns"), "produce"}, tmp.path());
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cape_start"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cape monitor -- PROGRAM"), std::string::npos) << r.err;
}

}  // namespace
