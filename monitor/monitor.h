// The monitor: runs one program under ptrace, serves its runtime calls (runtime/src/
// protocol.h), tracks its writes and makes and injects DICKPT checkpoints
// (003_45ed75503520c8f4.txt Sect. V; 004_9e6a480351e099dd.txt 3.2).
//
//   cape::monitor::MonitorOptions o;
//   o.argv = {"./prog", "arg"};
//   int status = cape::monitor::run_monitor(o, nullptr);   // alone: `cape monitor`
//   int status = cape::monitor::run_monitor(o, &exchange); // one node of a job: `cape node`
//
// The returned status is the program's exit status, or 128 + signal when a signal killed
// it (after a crash report on stderr), or 1 (or UserError::status) when the job failed:
// an Exchange call threw, a runtime call was misused, or KillSwitch::kill() was called.
// The program never outlives run_monitor (PTRACE_O_EXITKILL, SIGKILL on every error path).
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <optional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "monitor/dirty_tracker.h"
#include "monitor/exchange.h"

namespace cape::monitor {

// Lets another thread (the node's network side) end the job: kills the program and makes
// run_monitor return 1 after printing `reason`. Safe to call at any time, from any thread,
// before, during or after run_monitor.
class KillSwitch {
 public:
  void kill(const std::string& reason);
  bool killed() const { return killed_.load(); }
  std::string reason() const;
  // For run_monitor: the program's pid (0 = none yet / gone).
  void attach(pid_t pid);
  void detach();

 private:
  mutable std::mutex mu_;
  std::atomic<bool> killed_{false};
  std::string reason_;
  pid_t pid_ = 0;
};

// Where a node's monitor and program run (MonitorOptions::pin_for_sync_tracker).
enum class PinMode { none, always, calls };

struct MonitorOptions {
  TrackerKind tracker = TrackerKind::uffd;
  TrackerOptions tracker_options;                            // its variant (benchmarks)
  // --sync=lazy (docs/monitor.md, "Lazy synchronisation"): a slave gets only the list of pages
  // other nodes changed in a region and fetches each from the master when first touched.
  bool sync_lazy = false;
  std::string keep_checkpoints_dir;                          // "" = keep none
  std::vector<std::pair<std::string, std::string>> loads;    // NAME, FILE (--load)
  std::vector<std::string> argv;                             // the program and its arguments
  int node_rank = 0;                                         // this node's rank (and CPU placement)
  int node_count = 1;                                        // the job's nodes (CPU placement)
  // Descriptors the program gets as stdin/stdout/stderr (-1 = the monitor's own).
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // CPU placement (docs/monitor.md, "CPU placement"). A runtime call is a few ptrace stops,
  // each waking the other side: on one vCPU ~4 us, across vCPUs 70-90 us (KERNEL-FACTS.md).
  // Synchronous trackers (mprotect) also stop at every tracked fault, so they keep the
  // monitor and its program on one CPU, chosen by rank among those allowed (PinMode::always).
  // The uffd tracker keeps them together only during runtime calls and lets the program
  // float while it computes (PinMode::calls): with more nodes than CPUs, programs pinned for
  // good would share a CPU while another idles. CAPE_PIN=1 (always), calls, or 0 (never)
  // in the environment forces a mode for either tracker. False: no placement at all (the
  // monitor's tests, which must not move the test process).
  bool pin_for_sync_tracker = true;
  KillSwitch* kill_switch = nullptr;
  // Bernstein check (docs/tickpt.md): the master reports two nodes writing different values
  // to one shared word without a reduction, naming the variable and the region.
  bool check_races = false;
  // The 16 random bytes the kernel gives a new program (AT_RANDOM), which seed its stack
  // canaries and pointer guard: a job gives every node the same ones (derived from the job's
  // secret), so that the stack holds the same values on every node (docs/monitor.md,
  // "What every node must agree on"). Unset: the kernel's.
  std::optional<std::array<uint8_t, 16>> at_random;
  // --trace FILE: this node's timeline as Chrome trace-event JSON (monitor/trace.h), written
  // when the program ends; "" = off. Its timestamps count from trace_epoch_us (CLOCK_REALTIME
  // microseconds; 0 = the monitor's start), the same on every node of a job.
  std::string trace_file;
  int64_t trace_epoch_us = 0;
  // CAPE-1 (docs/cape1.md): a complete checkpoint of the program every `checkpoint_every`
  // seconds (0 = never) into `checkpoint_file`, outside parallel regions; `restart`: start the
  // program from this complete checkpoint (monitor/restart.h) instead of launching `argv`
  // (then argv, when given, names the executable).
  double checkpoint_every = 0;
  std::string checkpoint_file = "cape.ckpt";
  const ckpt::Checkpoint* restart = nullptr;
};

// Runs the program to its end; see the top of this file for the returned status.
// Throws UserError only for bad options (unreadable --load file, ...), before starting it.
int run_monitor(const MonitorOptions& options, Exchange* exchange /* nullptr = alone */);

}  // namespace cape::monitor
