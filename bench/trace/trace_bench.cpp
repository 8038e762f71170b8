// What `cape run --trace` adds to the monitor (docs/trace.md): the calls of one region of the
// papers' parallel for on a master of 3 nodes (region_begin, start, 2 x (create, send),
// create, stop, wait_for with 2 parts, inject, broadcast) recorded, the region closed (its
// phases cut, JSON made), many times; then the file written. Prints the CPU time per region.
// When tracing is off the monitor tests one null pointer per runtime call instead.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "monitor/trace.h"

using cape::monitor::Trace;
using cape::monitor::TraceOp;

static double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  int regions = argc > 1 ? std::atoi(argv[1]) : 100000;
  Trace t(0, 3);
  auto now = Trace::Clock::now();
  auto at = [&](int us) { return now + std::chrono::microseconds(us); };
  double t0 = cpu_ns();
  for (int r = 0; r < regions; ++r) {
    int b = r * 1000;
    t.call(TraceOp::region_begin, at(b), at(b + 1), {"", 0, 0, -1, "mamult.c:29"});
    t.call(TraceOp::start, at(b + 2), at(b + 3), {});
    for (int s = 1; s <= 2; ++s) {
      t.call(TraceOp::create, at(b + 4 * s), at(b + 4 * s + 1), {"before", 25, 1});
      t.call(TraceOp::send, at(b + 4 * s + 2), at(b + 4 * s + 3), {"before", 25, 1, s});
    }
    t.call(TraceOp::create, at(b + 20), at(b + 21), {"after", 239633, 300});
    t.call(TraceOp::stop, at(b + 22), at(b + 23), {});
    t.part(2, 239575, 300, at(b + 25), at(b + 26));
    t.part(1, 239576, 300, at(b + 27), at(b + 28));
    t.call(TraceOp::wait_for, at(b + 24), at(b + 29), {"after", 479151, 600});
    t.call(TraceOp::inject, at(b + 30), at(b + 31), {"after", 718750, 900});
    t.call(TraceOp::broadcast, at(b + 32), at(b + 33), {"after", 1437500, 900});
  }
  t.finish(at(regions * 1000));
  double t1 = cpu_ns();
  std::string path = "/tmp/cape_bench_trace." + std::to_string(::getpid()) + ".json";
  t.write(path);
  double t2 = cpu_ns();
  std::remove(path.c_str());
  std::printf("trace: %d regions of 12 calls: %.2f us CPU per region recorded and closed, %.2f us per region "
              "written (%zu events)\n",
              regions, (t1 - t0) / regions / 1e3, (t2 - t1) / regions / 1e3, t.event_count());
  return 0;
}
