// `cape run --trace` and `cape monitor --trace` (monitor/trace.h): the file is JSON (parsed
// here by a full reader), has one track per node, every runtime call lies inside one phase of
// its region and every phase inside its region on the same track, the phases come in the
// order of 001_3036025dc34c4021.txt Sect. V, and the calls that move a checkpoint report the
// bytes they moved. Real jobs: the hand-written Fig. 3 program and the papers' matrix product
// through cape-cc, 2 and 3 nodes, both trackers.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "../net/job_util.h"
#include "mini_json.h"
#include "monitor/trace.h"

namespace cape::test {
namespace {

using namespace std::chrono_literals;
using net::test::Proc;
using net::test::read_file;
using net::test::TempDir;

struct Slice {
  std::string name, cat;
  double ts, end;
  int pid, region;
  const Json* ev;
};

struct Checked {
  std::set<int> pids;
  std::map<int, int> regions;                                // per pid
  std::map<std::pair<int, std::string>, uint64_t> bytes;     // (pid, call) -> bytes summed
  std::map<std::pair<int, std::string>, int> calls;          // (pid, call) -> count
  std::map<int, std::vector<std::string>> phase_names;       // per pid, in order
};

// Parses `path` and checks the structure of trace.h; returns what the tests assert on.
Checked check_trace(const std::string& path) {
  std::string text = read_file(path);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << ": " << e.what() << "\n" << text.substr(0, 2000);
    return {};
  }
  Checked out;
  EXPECT_EQ(j.kind, Json::object);
  const Json& evs = j["traceEvents"];
  EXPECT_EQ(evs.kind, Json::array);
  std::vector<Slice> slices;
  std::set<int> named;
  for (const Json& e : evs.items) {
    EXPECT_TRUE(e.has("ph") && e.has("pid") && e.has("name"));
    if (e["ph"].s == "M") {
      if (e["name"].s == "process_name") named.insert(static_cast<int>(e["pid"].n));
      continue;
    }
    EXPECT_EQ(e["ph"].s, "X") << "only complete events";
    EXPECT_GE(e["dur"].n, 0);
    Slice s{e["name"].s, e["cat"].s, e["ts"].n, e["ts"].n + e["dur"].n, static_cast<int>(e["pid"].n),
            static_cast<int>(e["args"]["region"].n), &e};
    slices.push_back(s);
    out.pids.insert(s.pid);
  }
  EXPECT_EQ(named, out.pids) << "every track is named";
  const double eps = 0.01;  // ts and dur are printed with 3 decimals
  auto inside = [&](const Slice& in, const Slice& out_) {
    return in.pid == out_.pid && in.region == out_.region && in.ts >= out_.ts - eps && in.end <= out_.end + eps;
  };
  std::map<std::pair<int, int>, const Slice*> regions;
  for (const Slice& s : slices)
    if (s.cat == "region") {
      EXPECT_FALSE(regions.count({s.pid, s.region})) << "region " << s.region << " twice on node " << s.pid;
      regions[{s.pid, s.region}] = &s;
      out.regions[s.pid]++;
    }
  for (const Slice& s : slices) {
    if (s.cat == "region") continue;
    auto r = regions.find({s.pid, s.region});
    EXPECT_TRUE(r != regions.end() && inside(s, *r->second))
        << s.cat << " " << s.name << " of node " << s.pid << " outside its region " << s.region;
    if (s.cat == "phase") {
      out.phase_names[s.pid].push_back(s.name);
      EXPECT_TRUE(s.name == "Init" || s.name == "Before" || s.name == "Compute" || s.name == "Update") << s.name;
    }
    if (s.cat == "call") {
      int in = 0;
      for (const Slice& p : slices)
        if (p.cat == "phase" && inside(s, p)) ++in;
      EXPECT_GE(in, 1) << "call " << s.name << " of node " << s.pid << " at " << s.ts << " in no phase";
      out.calls[{s.pid, s.name}]++;
      if (s.ev->fields.at("args").has("bytes")) out.bytes[{s.pid, s.name}] += static_cast<uint64_t>((*s.ev)["args"]["bytes"].n);
    }
    if (s.cat == "part") {
      bool in_wait = false;
      for (const Slice& c : slices) in_wait = in_wait || (c.cat == "call" && c.name == "wait_for" && inside(s, c));
      EXPECT_TRUE(in_wait) << "a part outside wait_for";
    }
  }
  // Phases of one region do not overlap and follow Init, Before, (Compute, Update)*.
  for (auto& [key, region] : regions) {
    std::vector<const Slice*> ph;
    for (const Slice& s : slices)
      if (s.cat == "phase" && s.pid == key.first && s.region == key.second) ph.push_back(&s);
    for (size_t i = 1; i < ph.size(); ++i) EXPECT_LE(ph[i - 1]->end, ph[i]->ts + eps) << "phases overlap";
    size_t i = 0;
    if (i < ph.size() && ph[i]->name == "Init") ++i;
    EXPECT_TRUE(i < ph.size() && ph[i]->name == "Before") << "node " << key.first << " region " << key.second;
    for (size_t k = 0; ++i < ph.size(); ++k)
      EXPECT_EQ(ph[i]->name, k % 2 == 0 ? "Compute" : "Update")
          << "node " << key.first << " region " << key.second << " phase " << i;
  }
  return out;
}

// The unit: a master's and a slave's calls fed by hand, the phases cut as trace.h says.
TEST(Trace, PhasesCutAtCalls) {
  TempDir d;
  using C = monitor::Trace::Clock;
  auto t = [](int us) { return C::time_point(std::chrono::microseconds(1000000 + us)); };
  monitor::Trace m(0, 2, 0, t(0)), s(1, 2, 0, t(0));
  m.program_started(t(0));
  s.program_started(t(0));
  m.call(monitor::TraceOp::region_begin, t(100), t(110), {"", 0, 0, -1, "prog.c:12"});
  m.call(monitor::TraceOp::start, t(120), t(130), {});
  m.call(monitor::TraceOp::create, t(140), t(150), {"before", 64, 1});
  m.call(monitor::TraceOp::send, t(150), t(160), {"before", 64, 1, 1});
  m.call(monitor::TraceOp::create, t(300), t(310), {"after", 800, 1});
  m.call(monitor::TraceOp::stop, t(310), t(311), {});
  m.part(1, 800, 2, t(400), t(410));
  m.call(monitor::TraceOp::wait_for, t(311), t(420), {"after", 800, 2});
  m.call(monitor::TraceOp::inject, t(420), t(430), {"after", 1600, 3});
  m.call(monitor::TraceOp::broadcast, t(430), t(440), {"after", 1600, 3});
  m.finish(t(500));
  s.call(monitor::TraceOp::region_begin, t(100), t(110), {"", 0, 0, -1, "prog.c:12"});
  s.call(monitor::TraceOp::receive, t(110), t(165), {"before", 64, 1});
  s.call(monitor::TraceOp::inject, t(165), t(170), {"before", 64, 1});
  s.call(monitor::TraceOp::start, t(170), t(180), {});
  s.call(monitor::TraceOp::create, t(380), t(390), {"after", 800, 2});
  s.call(monitor::TraceOp::stop, t(390), t(391), {});
  s.call(monitor::TraceOp::send, t(392), t(399), {"after", 800, 2, 0});
  s.call(monitor::TraceOp::receive, t(399), t(445), {"after", 1600, 3});
  s.call(monitor::TraceOp::inject, t(445), t(450), {"after", 1600, 3});
  s.finish(t(500));
  m.write(d.path + "/m.json");
  s.write(d.path + "/s.json");
  auto missing = monitor::merge_trace_files({d.path + "/m.json", d.path + "/s.json", d.path + "/none.json"},
                                            d.path + "/t.json");
  ASSERT_EQ(missing.size(), 1u);
  Checked c = check_trace(d.path + "/t.json");
  EXPECT_EQ(c.pids, (std::set<int>{0, 1}));
  EXPECT_EQ(c.phase_names[0], (std::vector<std::string>{"Init", "Before", "Compute", "Update"}));
  EXPECT_EQ(c.phase_names[1], (std::vector<std::string>{"Init", "Before", "Compute", "Update"}));
  std::string text = read_file(d.path + "/t.json");
  // Master: Before ends with the send (160), Update starts at wait_for (311).
  EXPECT_NE(text.find("\"name\":\"Before\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":100.000,\"dur\":60.000,\"pid\":0"),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"name\":\"Compute\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":160.000,\"dur\":151.000,\"pid\":0"),
            std::string::npos) << text;
  // Slave: Compute begins with start() (170), Update starts at its send (392).
  EXPECT_NE(text.find("\"name\":\"Compute\",\"cat\":\"phase\",\"ph\":\"X\",\"ts\":170.000,\"dur\":222.000,\"pid\":1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("\"site\":\"prog.c:12\""), std::string::npos);
  EXPECT_EQ((c.bytes[{0, "wait_for"}]), 800u);
}

TEST(Trace, NamesFromTheProgramAreEscaped) {
  TempDir d;
  monitor::Trace m(0, 1);
  auto now = monitor::Trace::Clock::now();
  m.call(monitor::TraceOp::create, now, now, {"a\"b\\c\n\x01\xff", 1, 1});
  m.finish(now);
  m.write(d.path + "/t.json");
  check_trace(d.path + "/t.json");
}

std::string build_mamult(const TempDir& d) {
  std::string exe = d.path + "/mamult";
  Proc cc = Proc::start({CAPE_CC, "-O2", MAMULT_C, "-o", exe}, d.path);
  EXPECT_EQ(cc.wait(120s), 0) << cc.err();
  return exe;
}

struct Job {
  int status;
  std::string out, err;
};

Job run(const TempDir& d, std::vector<std::string> args, std::chrono::seconds bound = 120s) {
  Proc p = Proc::start(args, d.path);
  Job j;
  j.status = p.wait(bound);
  j.out = p.out();
  j.err = p.err();
  return j;
}

// Fig. 3 by hand (no region_begin): regions found from the calls themselves.
TEST(Trace, HandWrittenFig3ThreeNodes) {
  TempDir d;
  Job j = run(d, {CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--trace", d.path + "/t.json", "--",
                  FIG3, "3"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(j.out, "fig3 node=0 nodes=3 regions=3 sum=68694325248 ok\n");
  Checked c = check_trace(d.path + "/t.json");
  EXPECT_EQ(c.pids, (std::set<int>{0, 1, 2}));
  for (int p = 0; p < 3; ++p) EXPECT_EQ(c.regions[p], 3) << "node " << p;
  EXPECT_EQ((c.calls[{0, "send"}]), 6);
  EXPECT_GT((c.bytes[{0, "send"}]), 0u);
  EXPECT_GT((c.bytes[{0, "wait_for"}]), 0u);
  EXPECT_GT((c.bytes[{0, "broadcast"}]), 0u);
  for (int p = 1; p < 3; ++p) {
    EXPECT_GT((c.bytes[{p, "receive"}]), 0u);
    EXPECT_GT((c.bytes[{p, "send"}]), 0u);
  }
  // The parts are gone, only the joined file is left.
  EXPECT_NE(::access((d.path + "/t.json").c_str(), F_OK), -1);
  EXPECT_EQ(::access((d.path + "/t.json.node0.json").c_str(), F_OK), -1);
}

// The matrix product through cape-cc, 2 and 3 nodes, both trackers.
class TraceMamult : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(TraceMamult, PhasesAndBytes) {
  auto [nodes, tracker] = GetParam();
  TempDir d;
  std::string exe = build_mamult(d);
  Proc gcc = Proc::start({"gcc", "-O2", "-fopenmp", MAMULT_C, "-o", d.path + "/native"}, d.path);
  ASSERT_EQ(gcc.wait(120s), 0) << gcc.err();
  Job native = run(d, {d.path + "/native", "64"});
  ASSERT_EQ(native.status, 0);
  Job j = run(d, {CAPE_BIN, "run", "-n", std::to_string(nodes), "--tracker", tracker, "--output-dir",
                  d.path + "/logs", "--trace", "t.json", "--", exe, "64"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(j.out, native.out);
  Checked c = check_trace(d.path + "/t.json");
  std::set<int> want;
  for (int p = 0; p < nodes; ++p) want.insert(p);
  EXPECT_EQ(c.pids, want);
  EXPECT_EQ(c.regions[0], 1);
  EXPECT_EQ(c.phase_names[0], (std::vector<std::string>{"Init", "Before", "Compute", "Update"}));
  // C's rows: each slave sends its share (64 x 64 / nodes doubles at least), the master merges them.
  uint64_t share = 64 * 64 * 8 / static_cast<uint64_t>(nodes);
  EXPECT_GE((c.bytes[{0, "wait_for"}]), share * static_cast<uint64_t>(nodes - 1) * 9 / 10);
  for (int p = 1; p < nodes; ++p) {
    EXPECT_GE((c.bytes[{p, "send"}]), share * 9 / 10) << "node " << p;
    // Nothing comes to a slave in the program's last region: it deals its own share (no
    // `before` since issue 14's session 10) and exits after sending its part (last_parallel()).
    EXPECT_EQ((c.bytes[{p, "receive"}]), 0u) << "node " << p;
    EXPECT_EQ(c.phase_names[p].size(), 4u) << "node " << p;
  }
  std::string text = read_file(d.path + "/t.json");
  EXPECT_NE(text.find("mamult.c:"), std::string::npos) << "the region's site";
}

INSTANTIATE_TEST_SUITE_P(, TraceMamult,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Values("uffd", "mprotect")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "nodes_" + std::get<1>(info.param);
                         });

// A region with barriers: after Before, Compute and Update alternate once per exchange.
TEST(Trace, BarriersAlternateComputeAndUpdate) {
  TempDir d;
  Proc cc = Proc::start({CAPE_CC, "-O2", BARRIERS_C, "-o", d.path + "/barriers"}, d.path);
  ASSERT_EQ(cc.wait(120s), 0) << cc.err();
  Proc gcc = Proc::start({"gcc", "-O2", "-fopenmp", BARRIERS_C, "-o", d.path + "/native"}, d.path);
  ASSERT_EQ(gcc.wait(120s), 0) << gcc.err();
  Job native = run(d, {d.path + "/native"});
  Job j = run(d, {CAPE_BIN, "run", "-n", "3", "--output-dir", d.path + "/logs", "--trace", d.path + "/t.json", "--",
                  d.path + "/barriers"});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(j.out, native.out);
  Checked c = check_trace(d.path + "/t.json");
  std::vector<std::string> want = {"Init", "Before", "Compute", "Update", "Compute", "Update", "Compute", "Update"};
  for (int p = 0; p < 3; ++p) EXPECT_EQ(c.phase_names[p], want) << "node " << p;
  EXPECT_EQ((c.calls[{0, "wait_for"}]), 3);
  EXPECT_GT((c.bytes[{0, "broadcast"}]), 0u);
}

TEST(Trace, MonitorAlone) {
  TempDir d;
  std::string exe = build_mamult(d);
  Job j = run(d, {CAPE_BIN, "monitor", "--trace", d.path + "/m.json", "--", exe, "32"});
  ASSERT_EQ(j.status, 0) << j.err;
  Checked c = check_trace(d.path + "/m.json");
  EXPECT_EQ(c.pids, (std::set<int>{0}));
  EXPECT_EQ(c.regions[0], 1);
}

TEST(Trace, OffWritesNothing) {
  TempDir d;
  Job j = run(d, {CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--", FIG3, "1"});
  ASSERT_EQ(j.status, 0) << j.err;
  for (const auto& e : std::filesystem::directory_iterator(d.path))
    EXPECT_EQ(e.path().string().find(".json"), std::string::npos) << e.path();
}

TEST(Trace, MissingDirectoryIsRefusedBeforeStarting) {
  TempDir d;
  Job j = run(d, {CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--trace",
                  d.path + "/no/such/dir/t.json", "--", FIG3, "1"});
  EXPECT_NE(j.status, 0);
  EXPECT_NE(j.err.find("--trace"), std::string::npos) << j.err;
  EXPECT_NE(j.err.find("does not exist"), std::string::npos) << j.err;
  EXPECT_EQ(j.out, "") << "no node ran";
  Job k = run(d, {CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--trace", d.path, "--", FIG3, "1"});
  EXPECT_NE(k.status, 0);
  EXPECT_NE(k.err.find("is a directory"), std::string::npos) << k.err;
  // %r is `cape node`'s (one file per rank): cape run joins the nodes' parts into one file.
  Job r = run(d, {CAPE_BIN, "run", "-n", "2", "--output-dir", d.path + "/logs", "--trace", d.path + "/t.%r.json",
                  "--", FIG3, "1"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("without %r"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "no node ran";
}

}  // namespace
}  // namespace cape::test
