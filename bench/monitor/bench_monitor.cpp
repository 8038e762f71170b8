// cape_bench_monitor: what tracking written pages costs, per tracker, beside the baselines
// it must be judged against, all in one run (issue 3, "Performance"). Medians of 5 runs.
//
//   memcpy of one 4 KiB page          in this process, a 64 MiB buffer (cold cache)
//   untracked page touch              the victim's loop, natively
//   ptrace stop round trip            int3 in a traced child + PTRACE_CONT, same vCPU
//   runtime call                      cape_node_id() under `cape monitor` (trap + answer)
//   per tracker (and the trackers' variants, chosen with `cape monitor`'s variant flags):
//                                     touch, create, all-in per dirty page, in address
//                                     order and scattered; start(), cold and warm
//   start() after few writes          uffd keeping its copies between windows vs copying the
//                                     whole tracked set at every start() (--uffd-copy-all)
//   matmul compute phase              native vs under each tracker
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<double> run_victim(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    perror("popen");
    std::exit(1);
  }
  char line[512] = {};
  if (!fgets(line, sizeof line, p)) line[0] = 0;
  int st = pclose(p);
  if (st != 0) {
    std::fprintf(stderr, "failed (%d): %s\n", st, cmd.c_str());
    std::exit(1);
  }
  std::vector<double> v;
  std::istringstream in(line);
  double x;
  while (in >> x) v.push_back(x);
  return v;
}

// The victim under `cape monitor` with `tracker` and its variant flags.
std::string under(const std::string& tracker, const std::string& variant = "") {
  return std::string(CAPE_BIN) + " monitor --tracker " + tracker + (variant.empty() ? "" : " " + variant) +
         " -- " + VICTIM;
}

double memcpy_us_per_page() {
  const size_t n = 64 << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int r = 0; r < 5; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t off = 0; off < n; off += 4096) std::memcpy(b.data() + off, a.data() + off, 4096);
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / (n / 4096));
  }
  if (b[12345] != 1) std::abort();
  return median(t);
}

double ptrace_round_trip_us() {
  const int n = 2000;
  pid_t pid = fork();
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    raise(SIGSTOP);
    for (int i = 0; i < n; i++) __asm__ volatile("int3");
    _exit(0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) std::exit(1);
  if (ptrace(PTRACE_CONT, pid, nullptr, nullptr) != 0) std::exit(1);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; i++) {
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) std::exit(1);
    if (ptrace(PTRACE_CONT, pid, nullptr, nullptr) != 0) std::exit(1);
  }
  auto t1 = std::chrono::steady_clock::now();
  if (waitpid(pid, &st, 0) != pid) std::exit(1);
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}

}  // namespace

int main() {
  const long pages = 16384;  // 64 MiB, like ../shared/KERNEL-FACTS.md
  const std::string np = std::to_string(pages);
  std::printf("cape_bench_monitor: %ld dirty pages (64 MiB) per run, medians of 5 runs\n\n", pages);

  double cp = memcpy_us_per_page();
  std::printf("%-44s %9.3f us/page\n", "memcpy of one 4 KiB page", cp);
  std::vector<double> t;
  for (int r = 0; r < 5; r++) t.push_back(run_victim(std::string(VICTIM) + " touch " + np + " native")[1]);
  double touch_native = median(t) / 1000 / pages;
  std::printf("%-44s %9.3f us/page\n", "untracked page touch (native)", touch_native);

  // Same vCPU for the raw ptrace number (what synchronous designs need).
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  cpu_set_t all;
  sched_getaffinity(0, sizeof all, &all);
  sched_setaffinity(0, sizeof one, &one);
  double rt = ptrace_round_trip_us();
  sched_setaffinity(0, sizeof all, &all);
  std::printf("%-44s %9.3f us\n", "ptrace stop round trip (same vCPU)", rt);
  t.clear();
  for (int r = 0; r < 5; r++) t.push_back(run_victim(under("full") + " calls 2000")[0]);
  std::printf("%-44s %9.3f us\n", "runtime call (trap + answer, any vCPU)", median(t) / 1000 / 2000);

  // Each configuration: tracker, variant flags, order.
  struct Config {
    const char *label, *tracker, *variant, *order;
  };
  const Config configs[] = {
      {"uffd, read, 1 thread (before)", "uffd", "--uffd-read --uffd-copy-threads 1", "seq"},
      {"uffd, copy all (before)", "uffd", "--uffd-copy-all", "seq"},
      {"uffd", "uffd", "", "seq"},
      {"uffd", "uffd", "", "scatter"},
      {"uffd", "uffd", "", "half"},
      {"mprotect, 2 stops (CAPE-2)", "mprotect", "--mprotect-two-stops --mprotect-ahead 1", "seq"},
      {"mprotect, 2 stops (CAPE-2)", "mprotect", "--mprotect-two-stops --mprotect-ahead 1", "scatter"},
      {"mprotect, 1 stop", "mprotect", "--mprotect-ahead 1", "seq"},
      {"mprotect, 1 stop", "mprotect", "--mprotect-ahead 1", "scatter"},
      {"mprotect, 1 stop + neighbours", "mprotect", "", "seq"},
      {"mprotect, 1 stop + neighbours", "mprotect", "", "scatter"},
      {"mprotect, 1 stop + neighbours", "mprotect", "", "half"},
      {"full", "full", "", "seq"},
  };
  std::printf("\n%-30s %-8s %8s %8s %8s %8s %8s %9s %9s\n", "tracker", "order", "touch", "create",
              "all-in", "x memcpy", "x ptrace", "start()", "start() 2");
  std::printf("%-30s %-8s %8s %8s %8s %8s %8s %9s %9s\n", "", "", "us/page", "us/page", "us/page", "",
              "", "ms", "ms (warm)");
  for (const Config& c : configs) {
    std::vector<double> st, to, cr, st2;
    for (int r = 0; r < 5; r++) {
      auto v = run_victim(under(c.tracker, c.variant) + " touch " + np + " cape " + c.order);
      st.push_back(v[0]);
      to.push_back(v[1]);
      cr.push_back(v[2]);
      st2.push_back(v[4]);
    }
    double touch = median(to) / 1000 / pages, create = median(cr) / 1000 / pages;
    std::printf("%-30s %-8s %8.3f %8.3f %8.3f %8.1f %8.2f %9.2f %9.2f\n", c.label, c.order, touch,
                create, touch + create, (touch + create) / cp, (touch + create) / rt, median(st) / 1e6,
                median(st2) / 1e6);
  }

  // start() of a window when W pages were written since the previous one: the kept copies
  // vs the whole set copied again (64 MiB tracked). Median of 5 runs of the median of 5 rounds.
  std::printf("\nstart() of a window after W pages written since the previous one (%ld pages tracked)\n", pages);
  std::printf("%-30s %8s %10s %10s %8s\n", "", "W", "kept ms", "copy-all ms", "ratio");
  for (long w : {0L, 16L, 1024L, pages}) {
    double ms[2];
    for (int k = 0; k < 2; k++) {
      std::vector<double> runs;
      for (int r = 0; r < 5; r++) {
        auto v = run_victim(under("uffd", k ? "--uffd-copy-all" : "") + " between " + np + " " + std::to_string(w));
        runs.push_back(median(v));
      }
      ms[k] = median(runs) / 1e6;
    }
    std::printf("%-30s %8ld %10.3f %10.3f %8.1f\n", "uffd start()", w, ms[0], ms[1], ms[1] / ms[0]);
  }

  const std::string n = "400";
  std::printf("\nmatmul %sx%s (compute phase inside start()/create(); 3x%s doubles tracked)\n",
              n.c_str(), n.c_str(), n.c_str());
  t.clear();
  for (int r = 0; r < 5; r++) t.push_back(run_victim(std::string(VICTIM) + " matmul " + n + " native")[0]);
  double native = median(t);
  std::printf("%-30s %8.1f ms\n", "native", native / 1e6);
  const Config mm[] = {{"uffd", "uffd", "", ""},
                       {"mprotect, 2 stops (CAPE-2)", "mprotect",
                        "--mprotect-two-stops --mprotect-ahead 1", ""},
                       {"mprotect, 1 stop", "mprotect", "--mprotect-ahead 1", ""},
                       {"mprotect, 1 stop + neighbours", "mprotect", "", ""},
                       {"full", "full", "", ""}};
  for (const Config& k : mm) {
    std::vector<double> c, cr;
    for (int r = 0; r < 5; r++) {
      auto v = run_victim(under(k.tracker, k.variant) + " matmul " + n + " cape");
      c.push_back(v[0]);
      cr.push_back(v[1]);
    }
    std::printf("%-30s %8.1f ms  compute overhead %+6.1f%%  create %.2f ms\n", k.label,
                median(c) / 1e6, (median(c) / native - 1) * 100, median(cr) / 1e6);
  }
  return 0;
}
