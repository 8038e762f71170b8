// A job's failure, as a node sees it: recorded once with the status every node exits with,
// every waiter woken, the slaves told (master), the node's own on_failure run (docs/net.md
// "Failures").
#include <cassert>

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
  cv_.notify_all();
}

void Node::throw_failure() {
  std::lock_guard lk(mu_);
  assert(failure_);
  throw UserError(*failure_, failure_exit_code_);
}

std::optional<std::string> Node::failure() const {
  std::lock_guard lk(mu_);
  return failure_;
}

std::optional<int> Node::failure_exit_code() const {
  std::lock_guard lk(mu_);
  if (!failure_) return std::nullopt;
  return failure_exit_code_;
}

}  // namespace cape::net
