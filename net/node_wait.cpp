// The waiting monitor reads its own sockets (node.h, "Who reads"; docs/net.md, issue 14).
//
// A frame handed over by a reader thread costs two wakeups where one would do: the socket
// wakes the reader, the reader wakes the monitor asleep in receive/wait_for (a futex, often
// on the other vCPU: ~40 us on this VM when it was halted; bench/floor's region_floor:
// 64 us per empty region against 42 us with the monitors reading themselves). So while the
// monitor would sleep on cv_, it takes the sockets it waits on out of their readers' epoll
// sets (the readers are not woken for what it reads), holds their read_mu (a reader under way
// finishes its frame first: frames stay in order) and polls them itself, with an eventfd that
// wake_waiters() signals for everything else (a frame filed by another reader, a failure).
// Each frame it reads is handled as the reader would (on_frame: heartbeats, page requests,
// lock frames, output all served inline); once something a waiter may wait for changed, it
// gives the sockets back before its caller looks: between waits (merging a part, fetching
// a page inside the merge) the readers serve them again.
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "net/node.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::net {

void Node::wake_waiters() {
  wakes_.fetch_add(1);
  cv_.notify_all();
  // (seq_cst both ways with read_while_waiting: either it sees the count move before it
  // polls, or this sees it polling and signals.)
  if (polling_.load() > 0) {
    uint64_t one = 1;
    if (::write(waiter_wake_.get(), &one, sizeof one) < 0 && errno != EAGAIN)
      CAPE_LOG_AT(warn, "net") << errno_message("waking the waiting monitor");
  }
}

void Node::read_while_waiting(std::unique_lock<std::mutex>& lk, const std::vector<Peer*>& from, int64_t spin_until) {
  const uint64_t seen = wakes_.load();
  std::vector<Peer*> mine;
  if (opt_.waiter_reads)
    for (Peer* p : from)
      if (p && p->joined && !p->closed && p->ready.valid()) mine.push_back(p);
  if (mine.empty()) {
    cv_.wait(lk);
    return;
  }
  lk.unlock();
  const int64_t silence = std::chrono::duration_cast<std::chrono::nanoseconds>(opt_.timeout).count();
  // Back to their readers however this ends (a socket with bytes waiting wakes its reader at
  // once); also if handling a frame throws.
  struct Lent {
    std::vector<Peer*>& peers;
    std::vector<std::unique_lock<std::mutex>> held;
    void give_back() {
      for (size_t i = 0; i < held.size(); ++i) {
        held[i].unlock();
        epoll_event ev{};
        ev.events = EPOLLIN;
        if (::epoll_ctl(peers[i]->ready.get(), EPOLL_CTL_ADD, peers[i]->fd.get(), &ev) != 0)
          CAPE_LOG_AT(warn, "net") << errno_message("epoll_ctl ADD");
      }
      held.clear();
    }
    ~Lent() { give_back(); }
  } lent{mine, {}};
  // Take them: out of their readers' sets first, then their read locks (in rank order: the
  // only thread that takes several).
  lent.held.reserve(mine.size());
  for (Peer* p : mine) {
    if (::epoll_ctl(p->ready.get(), EPOLL_CTL_DEL, p->fd.get(), nullptr) != 0)
      CAPE_LOG_AT(warn, "net") << errno_message("epoll_ctl DEL");
    lent.held.emplace_back(p->read_mu);
  }
  std::vector<bool> over(mine.size(), false);
  std::vector<pollfd> q(mine.size() + 1);
  for (;;) {
    // What the readers had read ahead (poll sees only the sockets).
    for (size_t i = 0; i < mine.size(); ++i)
      while (!over[i] && mine[i]->ahead.at < mine[i]->ahead.end)
        if (read_one(*mine[i]) == Got::closed) over[i] = true;
    if (wakes_.load() != seen) break;
    int64_t now = now_ns(), wait = silence;
    size_t n = 0;
    for (size_t i = 0; i < mine.size(); ++i) {
      if (over[i]) continue;
      q[n++] = {mine[i]->fd.get(), POLLIN, 0};
      wait = std::min(wait, mine[i]->last_recv_ns.load() + silence - now);
    }
    if (n == 0) break;  // every one ended (p.closed): the caller sees it
    q[n++] = {waiter_wake_.get(), POLLIN, 0};
    polling_.fetch_add(1);
    if (wakes_.load() != seen) {
      polling_.fetch_sub(1);
      break;
    }
    // Spinning (a lock's grant, bounded by spin_until): a poll that does not sleep, then the
    // CPU offered to whoever else is runnable here (it may be the master's thread that answers).
    const bool spin = spin_until > now;
    int r = ::poll(q.data(), n, spin ? 0 : static_cast<int>(std::max<int64_t>(wait, 0) / 1000000) + 1);
    polling_.fetch_sub(1);
    if (r < 0) {
      if (errno == EINTR) continue;
      CAPE_LOG_AT(warn, "net") << errno_message("poll while waiting");
      break;  // the readers take over again
    }
    if (spin && r == 0) {
      ::sched_yield();
      continue;
    }
    if (q[n - 1].revents) {
      uint64_t count;
      (void)!::read(waiter_wake_.get(), &count, sizeof count);
    }
    now = now_ns();
    for (size_t i = 0, k = 0; i < mine.size(); ++i) {
      if (over[i]) continue;
      const pollfd& e = q[k++];
      Peer& p = *mine[i];
      Got g = e.revents ? read_one(p) : Got::nothing;
      if (g == Got::closed) over[i] = true;
      else if (g == Got::nothing && now - p.last_recv_ns.load() >= silence)  // said nothing for `timeout`
        over[i] = end_of(p, IoResult{IoStatus::timeout, 0, {}}) == Got::closed;
    }
  }
  lent.give_back();  // before the caller looks
  lk.lock();
}

}  // namespace cape::net
