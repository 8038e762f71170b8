// Heartbeats: every connection that has been quiet for `heartbeat` gets one, so that the far
// end's reader tells a quiet peer from a dead one (the `timeout` of silence, docs/net.md).
#include "net/node.h"

namespace cape::net {

void Node::heartbeat_loop() {
  const int64_t interval = std::chrono::duration_cast<std::chrono::nanoseconds>(opt_.heartbeat).count();
  std::unique_lock lk(mu_);
  while (!stopping_) {
    // Its own condition: cv_ is notified at every arrival, which would wake this thread too.
    // (Or sooner: a frame waits to go out now, a lock's release.)
    heartbeat_cv_.wait_for(lk, opt_.heartbeat, [&] { return stopping_ || flush_soon_; });
    flush_soon_ = false;
    if (stopping_) break;
    std::vector<Peer*> due;
    int64_t now = now_ns();
    for (auto& p : peers_)
      if (p && p->joined && !p->closed && (now - p->last_send_ns >= interval || p->frames_waiting))
        due.push_back(p.get());
    lk.unlock();
    for (Peer* p : due) p->heartbeat(opt_.timeout);
    lk.lock();
  }
}

}  // namespace cape::net
