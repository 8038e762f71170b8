// One node's timeline of a job (`cape run --trace FILE`, `cape monitor --trace FILE`): a
// Chrome trace-event JSON (Perfetto, chrome://tracing) with one track per node.
//
// On each node's track, per parallel region, three levels of complete ("X") events:
//
//   region 2 (prog.c:21)                                        cat "region"
//     Init | Before | Compute | Update [| Compute | Update]      cat "phase"
//       region_begin start create send ... wait_for inject ...   cat "call", args: bytes
//         part from node 1, part from node 2                     cat "part" (inside wait_for)
//
// The phases are those of 001_3036025dc34c4021.txt Sect. V (Fig. 4 and 5's legends), cut
// at runtime calls so that every call lies inside one phase:
//   Init     the sequential part before the region (ttt): from the end of the previous
//            region's last call (or the program's start) to the region's first call.
//   Before   (tb) master: from the region's first call to the end of its last send before
//            the first wait_for (Fig. 3 lines 2-5); slave: from the first call to its
//            start() (receive, inject: lines 14-15).
//   Compute  (tc) master: from there to its wait_for (its own share, create, stop: lines
//            6-7); slave: from its start() to its send (start, the loop body D, create,
//            stop: lines 16-19; start() sets up the write tracking, the checkpointer's
//            overhead that 001 Table I puts in tc).
//   Update   (tu) master: wait_for, inject, merge, broadcast (lines 8-12); slave: send,
//            receive, inject (lines 20-23). A start() after an Update (a barrier inside a
//            `parallel` region) begins another Compute.
// A region begins at cape_region_begin() (every cape-cc program), or, in a hand-written
// program that never calls it, at the first call outside a region; it ends at the next
// region's beginning or the program's end (hand-written: the master's next start(), the
// slave's inject after its send).
//
// Timestamps are microseconds of CLOCK_REALTIME minus the job's epoch (`--trace-epoch`),
// so that the nodes of a job line up; durations come from the monotonic clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cape::monitor {

enum class TraceOp { region_begin, start, stop, create, inject, send, receive, wait_for, merge, broadcast };
const char* trace_op_name(TraceOp op);

class Trace {
 public:
  using Clock = std::chrono::steady_clock;

  // epoch_us: CLOCK_REALTIME microseconds that become ts 0 (0: this moment). Tests give
  // steady_zero instead: that steady-clock time is ts 0.
  Trace(int rank, int size, int64_t epoch_us = 0, Clock::time_point steady_zero = {});

  // The program (re)started: the first region's Init begins here.
  void program_started(Clock::time_point t);
  // What the call that is being served moved (set by the call, read by call()).
  struct Moved {
    Moved() = default;
    Moved(std::string ck, uint64_t b, uint64_t r, int to = -1, std::string where = {})
        : checkpoint(std::move(ck)), bytes(b), runs(r), peer(to), site(std::move(where)) {}
    std::string checkpoint;  // its name
    uint64_t bytes = 0;      // memory bytes of the checkpoint(s) made, sent, received, injected
    uint64_t runs = 0;
    int peer = -1;           // send: the node it went to
    std::string site;        // region_begin: the region's file:line
  };
  // A runtime call served from t0 to t1.
  void call(TraceOp op, Clock::time_point t0, Clock::time_point t1, const Moved& moved);
  // Inside wait_for: one slave's part arrived at t0 and was merged by t1.
  void part(int from, uint64_t bytes, uint64_t runs, Clock::time_point t0, Clock::time_point t1);
  // The program ended at t: the open region closes.
  void finish(Clock::time_point t);

  // The events as JSON objects, one per line, each line but the last ending in ",".
  std::string event_lines() const;
  // A complete trace file with this node's events (written as a new file: util/files.h).
  void write(const std::string& path) const;

  // The events so far (tests, experiments).
  size_t event_count() const { return events_.size(); }

 private:
  struct Call {
    TraceOp op;
    double t0, t1;
    Moved moved;
  };
  struct Part {
    int from;
    uint64_t bytes, runs;
    double t0, t1;
  };
  double us(Clock::time_point t) const;
  void open_region(double t0, bool explicit_begin);
  void close_region();
  void emit(const char* cat, const std::string& name, double t0, double t1, const std::string& args);

  int rank_, size_;
  double origin_us_;          // `us()` of the steady clock's epoch
  double last_end_ = 0;       // the previous region's last call, or the program's start
  bool started_ = false;      // last_end_ is set
  bool in_region_ = false;
  bool explicit_ = false;     // opened by region_begin
  int regions_ = 0;
  std::vector<Call> calls_;   // the open region's
  std::vector<Part> parts_;
  std::vector<std::string> events_;
};

// Joins the node files of a job (each a complete trace) into one trace at `out`; files that
// do not exist are skipped and returned (a node on another host writes its file there).
std::vector<std::string> merge_trace_files(const std::vector<std::string>& parts, const std::string& out);

// CLOCK_REALTIME in microseconds (a job's --trace-epoch).
int64_t trace_now_us();

}  // namespace cape::monitor
