// A job's failure, as a node sees it: recorded once with the status every node exits with,
// every waiter woken, the slaves told (master), the node's own on_failure run (docs/net.md
// "Failures").
#include "net/node.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::net {

void Node::fail(const std::string& message, bool report, int exit_code) {
  fail_as_is(message + " (job exit status " + std::to_string(exit_code) + ")", report, exit_code);
}

void Node::fail_as_is(const std::string& message, bool report, int exit_code) {
  {
    std::lock_guard lk(mu_);
    if (failing_ || stopping_) return;
    failing_ = true;
  }
  CAPE_LOG_AT(info, "net") << "job failed: " << message;
  if (opt_.rank == 0) {
    // Tell every slave still connected, with a short bound: they stop their programs.
    PayloadWriter w;
    w.str(message);
    w.i32(exit_code);
    iovec v = iov_of(w.buffer().data(), w.buffer().size());
    for (auto& peer : peers_) {
      if (!peer) continue;
      Peer& p = *peer;
      {
        std::lock_guard lk(mu_);
        if (!p.joined || p.closed) continue;
      }
      std::unique_lock sl(p.send_mu, std::defer_lock);
      // A writer stuck on this peer holds the lock; the stall bound frees it in time.
      if (!sl.try_lock_for(opt_.timeout)) continue;
      (void)write_frame(p.fd.get(), FrameType::abort, {&v, 1}, std::chrono::milliseconds(500), p.next_seal());
    }
  }
  if (opt_.on_failure) opt_.on_failure(message, report);
  // Waiters learn of the failure only now: by the time one throws it, the slaves were told and
  // on_failure (the kill switch, the report to cape run) has run.
  {
    std::lock_guard lk(mu_);
    failure_ = message;
    failure_exit_code_ = exit_code;
  }
  wake_waiters();
}

// While another thread fails the job (failing_: telling the slaves, running on_failure),
// the failure is recorded in a moment: these wait for it rather than see none. A node whose
// monitor was stopped by that on_failure (the kill switch) must read the job's status, not
// exit with its own 1 (mpirun then reported 1 instead of the failing program's status).
void Node::wait_while_failing(std::unique_lock<std::mutex>& lk) const {
  cv_.wait(lk, [&] { return failure_ || !failing_; });
}

void Node::throw_failure() {
  std::unique_lock lk(mu_);
  wait_while_failing(lk);
  if (!failure_) throw UserError("the node is shutting down");
  throw UserError(*failure_, failure_exit_code_);
}

std::optional<std::string> Node::failure() const {
  std::unique_lock lk(mu_);
  wait_while_failing(lk);
  return failure_;
}

std::optional<int> Node::failure_exit_code() const {
  std::unique_lock lk(mu_);
  wait_while_failing(lk);
  if (!failure_) return std::nullopt;
  return failure_exit_code_;
}

}  // namespace cape::net
