// CAPE-1 inside the monitor (docs/cape1.md): the program's create(file) (libcape's
// cape_create_complete, 003_45ed75503520c8f4.txt Fig. 2), `cape monitor --checkpoint-every
// SECONDS` (a tick the monitor sends itself), and a restart run under a monitor again.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace cape::monitor {

// Serves create(file) for a program stopped at its runtime call: a complete checkpoint in
// which the call answers 0 is written to `file`; returns 1 (the answer here). Refused with a
// UserError inside a parallel region's window.
// `frame_boundary`: the frame cape_mark_frame() marked (0 = none), recorded in the file's
// process section: CAPE-1's merge keeps another part's writes from there up (a region's frames).
long create_complete_call(pid_t pid, pid_t tid, const std::string& file, bool in_window, uint64_t frame_boundary = 0);

// A periodic checkpoint at a tick's stop (anywhere in the program). Skipped (returns false)
// inside a window; the file is replaced atomically.
bool periodic_checkpoint(pid_t pid, const std::string& file, bool in_window);

// Sends the program a tick every `seconds`: SIGSTOP queued with a value the supervisor
// recognises (is_checkpoint_tick), served at its signal-delivery stop and never delivered.
class CheckpointTimer {
 public:
  CheckpointTimer(pid_t pid, double seconds);
  ~CheckpointTimer();
  CheckpointTimer(const CheckpointTimer&) = delete;
  CheckpointTimer& operator=(const CheckpointTimer&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};
bool is_checkpoint_tick(const siginfo_t& si);

}  // namespace cape::monitor
