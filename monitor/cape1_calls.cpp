#include "monitor/cape1_calls.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "ckpt/format.h"
#include "ckpt/process_image.h"
#include "monitor/complete.h"
#include "monitor/dirty_tracker.h"  // kScratchAddress
#include "monitor/tick_signal.h"
#include "monitor/tracee.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {
namespace {

constexpr int kTickValue = 0x43415031;  // "CAP1"

CompleteOptions monitor_options(const std::string& name) {
  CompleteOptions o;
  o.name = name;
  o.under_monitor = true;
  o.skip = {{kScratchAddress, kScratchAddress + (uint64_t{1} << 40)}};  // the monitor's shared scratch
  return o;
}

}  // namespace

long create_complete_call(pid_t pid, pid_t tid, const std::string& file, bool in_window, uint64_t frame_boundary) {
  if (in_window)
    throw UserError("create(\"" + file + "\") inside a parallel region: complete checkpoints (CAPE-1) are made "
                    "outside regions only");
  CompleteOptions o = monitor_options("create");
  user_regs_struct r = Tracee::get_regs(tid);
  r.rax = 0;  // the restarted process: create() returns FALSE
  o.resume_registers = r;
  CompleteStats stats;
  ckpt::Checkpoint c = take_complete(pid, o, &stats);
  if (frame_boundary) {
    ckpt::ProcessImage p = ckpt::decode_process(c.process);
    p.frame_boundary = frame_boundary;
    c.process = ckpt::encode_process(p);
  }
  try {
    ckpt::write_file(c, file);
  } catch (const ckpt::Error& e) {
    throw UserError(std::string("create(\"") + file + "\"): " + e.what());
  }
  CAPE_LOG_AT(info, "monitor") << "create(" << file << "): " << stats.stored_bytes << " bytes of "
                               << stats.writable_bytes << " writable in " << stats.milliseconds << " ms";
  return 1;
}

bool periodic_checkpoint(pid_t pid, const std::string& file, bool in_window) {
  if (in_window) {
    CAPE_LOG_AT(info, "monitor") << "periodic checkpoint skipped: the program is in a parallel region";
    return false;
  }
  CompleteStats stats;
  ckpt::Checkpoint c = take_complete(pid, monitor_options("periodic"), &stats);
  ckpt::write_file(c, file);
  CAPE_LOG_AT(info, "monitor") << "periodic checkpoint " << file << ": " << stats.stored_bytes << " bytes in "
                               << stats.milliseconds << " ms";
  return true;
}

CheckpointTimer::CheckpointTimer(pid_t pid, double seconds) {
  // Through a pidfd: a tick never reaches another process that got the number after this
  // one ended.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) fail_errno("pidfd_open");
  thread_ = std::thread([this, pid, seconds, pidfd] {
    std::unique_lock lock(mu_);
    for (;;) {
      if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
        ::close(pidfd);
        return;
      }
      (void)pid;
      (void)send_tick(pidfd, kTickValue);
    }
  });
}

CheckpointTimer::~CheckpointTimer() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool is_checkpoint_tick(const siginfo_t& si) { return is_tick(si, kTickValue); }

}  // namespace cape::monitor
