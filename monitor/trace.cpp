// The trace (trace.h): calls are kept per region; when the region closes its phases are cut
// from them and everything becomes JSON lines.
#include "monitor/trace.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/files.h"
#include "util/text.h"

namespace cape::monitor {

namespace {

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

}  // namespace

const char* trace_op_name(TraceOp op) {
  switch (op) {
    case TraceOp::region_begin: return "region_begin";
    case TraceOp::start: return "start";
    case TraceOp::stop: return "stop";
    case TraceOp::create: return "create";
    case TraceOp::inject: return "inject";
    case TraceOp::send: return "send";
    case TraceOp::receive: return "receive";
    case TraceOp::wait_for: return "wait_for";
    case TraceOp::merge: return "merge";
    case TraceOp::broadcast: return "broadcast";
  }
  return "?";
}

int64_t trace_now_us() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

Trace::Trace(int rank, int size, int64_t epoch_us, Clock::time_point steady_zero) : rank_(rank), size_(size) {
  int64_t now = trace_now_us();
  if (epoch_us == 0) epoch_us = now;
  double steady_now = std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
  origin_us_ = static_cast<double>(now - epoch_us) - steady_now;
  if (steady_zero != Clock::time_point{})
    origin_us_ = -std::chrono::duration<double, std::micro>(steady_zero.time_since_epoch()).count();
  std::string role = rank == 0 ? " (master)" : " (slave)";
  events_.push_back("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
                    ",\"tid\":0,\"args\":{\"name\":\"node " + std::to_string(rank) + role + "\"}}");
  events_.push_back("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
                    ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(rank) + "}}");
  events_.push_back("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank) +
                    ",\"tid\":0,\"args\":{\"name\":\"monitor\"}}");
}

double Trace::us(Clock::time_point t) const {
  return origin_us_ + std::chrono::duration<double, std::micro>(t.time_since_epoch()).count();
}

void Trace::program_started(Clock::time_point t) {
  if (in_region_) close_region();
  last_end_ = us(t);
  started_ = true;
}

void Trace::emit(const char* cat, const std::string& name, double t0, double t1, const std::string& args) {
  std::string e = "{\"name\":" + util::json_quoted(name, true) + ",\"cat\":\"" + cat + "\",\"ph\":\"X\",\"ts\":" + num(t0) +
                  ",\"dur\":" + num(t1 > t0 ? t1 - t0 : 0) + ",\"pid\":" + std::to_string(rank_) + ",\"tid\":0";
  if (!args.empty()) e += ",\"args\":{" + args + "}";
  events_.push_back(e + "}");
}

void Trace::open_region(double t0, bool explicit_begin) {
  if (!started_) last_end_ = t0, started_ = true;
  in_region_ = true;
  explicit_ = explicit_begin;
  calls_.clear();
  parts_.clear();
}

void Trace::call(TraceOp op, Clock::time_point t0c, Clock::time_point t1c, const Moved& moved) {
  double t0 = us(t0c), t1 = us(t1c);
  if (op == TraceOp::region_begin) {
    if (in_region_) close_region();
    open_region(t0, true);
  } else if (!in_region_) {
    open_region(t0, false);
  } else if (!explicit_ && rank_ == 0 && op == TraceOp::start) {
    // A hand-written master's next region: a start() after its wait_for.
    for (const Call& c : calls_)
      if (c.op == TraceOp::wait_for) {
        close_region();
        open_region(t0, false);
        break;
      }
  }
  calls_.push_back({op, t0, t1, moved});
  if (!explicit_ && rank_ != 0 && op == TraceOp::inject) {
    // A hand-written slave's region ends with the inject that follows its send.
    for (const Call& c : calls_)
      if (c.op == TraceOp::send) {
        close_region();
        break;
      }
  }
}

void Trace::part(int from, uint64_t bytes, uint64_t runs, Clock::time_point t0, Clock::time_point t1) {
  parts_.push_back({from, bytes, runs, us(t0), us(t1)});
}

void Trace::finish(Clock::time_point t) {
  (void)t;
  if (in_region_) close_region();
}

// Cuts the region's phases at its calls (trace.h) and emits region, phases, calls, parts.
void Trace::close_region() {
  in_region_ = false;
  if (calls_.empty()) return;
  ++regions_;
  const bool master = rank_ == 0;
  double begin = calls_.front().t0, end = calls_.back().t1;
  double init_from = last_end_ > begin ? begin : last_end_;
  std::string site;
  uint64_t sent = 0, received = 0, created = 0;
  for (const Call& c : calls_) {
    if (c.op == TraceOp::region_begin) site = c.moved.site;
    if (c.op == TraceOp::send || c.op == TraceOp::broadcast) sent += c.moved.bytes;
    if (c.op == TraceOp::receive || c.op == TraceOp::wait_for) received += c.moved.bytes;
    if (c.op == TraceOp::create) created += c.moved.bytes;
  }
  std::string name = "region " + std::to_string(regions_) + (site.empty() ? "" : " (" + site + ")");
  emit("region", name, init_from, end,
       "\"region\":" + std::to_string(regions_) + ",\"site\":" + util::json_quoted(site, true) +
           ",\"bytes_created\":" + std::to_string(created) + ",\"bytes_sent\":" + std::to_string(sent) +
           ",\"bytes_received\":" + std::to_string(received));

  // Phase boundaries (trace.h): [from, to) with a name; calls fall inside by construction.
  struct Phase {
    std::string name;
    double from, to;
    uint64_t bytes = 0;
  };
  std::vector<Phase> phases;
  if (begin > init_from) phases.push_back({"Init", init_from, begin});
  // The Before phase's end.
  size_t first_exchange = calls_.size();  // master: first wait_for; slave: first send
  for (size_t i = 0; i < calls_.size(); ++i)
    if (calls_[i].op == (master ? TraceOp::wait_for : TraceOp::send)) {
      first_exchange = i;
      break;
    }
  double before_end = calls_.front().t1;
  bool found = false;
  for (size_t i = 0; i < first_exchange; ++i) {
    const Call& c = calls_[i];
    if (master && c.op == TraceOp::send) before_end = c.t1, found = true;
    if (!master && c.op == TraceOp::start && !found) before_end = c.t0, found = true;
  }
  if (master && !found)
    for (size_t i = 0; i < first_exchange; ++i)
      if (calls_[i].op == TraceOp::start) {
        before_end = calls_[i].t1;
        break;
      }
  phases.push_back({"Before", begin, before_end});
  // Then Compute until an exchange, Update until a start() after it, and so on.
  bool updating = false;
  double at = before_end;
  for (const Call& c : calls_) {
    if (c.t0 < before_end || (c.op == TraceOp::start && c.t0 == before_end)) continue;
    if (!updating && c.op == (master ? TraceOp::wait_for : TraceOp::send)) {
      phases.push_back({"Compute", at, c.t0});
      at = c.t0;
      updating = true;
    } else if (updating && c.op == TraceOp::start) {
      phases.push_back({"Update", at, c.t0});
      at = c.t0;
      updating = false;
    }
  }
  phases.push_back({updating ? "Update" : "Compute", at, end});
  for (Phase& p : phases) {
    for (const Call& c : calls_)
      if (c.t0 >= p.from && c.t1 <= p.to &&
          (c.op == TraceOp::send || c.op == TraceOp::broadcast || c.op == TraceOp::receive ||
           c.op == TraceOp::wait_for))
        p.bytes += c.moved.bytes;
    if (p.to > p.from || p.name == "Before")
      emit("phase", p.name, p.from, p.to,
           "\"region\":" + std::to_string(regions_) + ",\"bytes_moved\":" + std::to_string(p.bytes));
  }
  for (const Call& c : calls_) {
    std::string args = "\"region\":" + std::to_string(regions_);
    if (!c.moved.checkpoint.empty()) args += ",\"checkpoint\":" + util::json_quoted(c.moved.checkpoint, true);
    if (c.op != TraceOp::region_begin && c.op != TraceOp::start && c.op != TraceOp::stop)
      args += ",\"bytes\":" + std::to_string(c.moved.bytes) + ",\"runs\":" + std::to_string(c.moved.runs);
    if (c.moved.peer >= 0) args += ",\"to\":" + std::to_string(c.moved.peer);
    if (c.op == TraceOp::broadcast) args += ",\"to_nodes\":" + std::to_string(size_ - 1);
    if (!c.moved.site.empty()) args += ",\"site\":" + util::json_quoted(c.moved.site, true);
    emit("call", trace_op_name(c.op), c.t0, c.t1, args);
  }
  for (const Part& p : parts_)
    emit("part", "part from node " + std::to_string(p.from), p.t0, p.t1,
         "\"region\":" + std::to_string(regions_) + ",\"from\":" + std::to_string(p.from) +
             ",\"bytes\":" + std::to_string(p.bytes) + ",\"runs\":" + std::to_string(p.runs));
  last_end_ = end;
  calls_.clear();
  parts_.clear();
}

std::string Trace::event_lines() const {
  std::string o;
  for (size_t i = 0; i < events_.size(); ++i) o += events_[i] + (i + 1 < events_.size() ? ",\n" : "\n");
  return o;
}

namespace {

void write_all(const std::string& path, const std::string& text) {
  util::ScopedFd fd = util::create_replacing(path, 0644);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(fd.get(), text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw UserError(errno_message("writing the trace " + path));
    done += static_cast<size_t>(w);
  }
}

const char* const kHead = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"cape\",\"format\":\"docs/trace.md\"},\n\"traceEvents\":[\n";
const char* const kTail = "]}\n";

}  // namespace

void Trace::write(const std::string& path) const { write_all(path, kHead + event_lines() + kTail); }

// A node file is kHead, event lines, kTail (write() above): its events are the lines between.
std::vector<std::string> merge_trace_files(const std::vector<std::string>& parts, const std::string& out) {
  std::vector<std::string> missing, lines;
  for (const std::string& p : parts) {
    std::ifstream in(p);
    if (!in) {
      missing.push_back(p);
      continue;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] != '{' || line.rfind("{\"displayTimeUnit\"", 0) == 0) continue;
      if (line.back() == ',') line.pop_back();
      lines.push_back(line);
    }
  }
  std::string text = kHead;
  for (size_t i = 0; i < lines.size(); ++i) text += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  write_all(out, text + kTail);
  return missing;
}

}  // namespace cape::monitor
