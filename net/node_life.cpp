// The job's life cycle on a node: the region it is in (for failure messages), its program's
// end (the master waits for the slaves to finish), and its own failure (reported, not
// looking as if the node had vanished).
#include <unistd.h>

#include <algorithm>

#include "net/node.h"
#include "util/log.h"
#include "util/wait_status.h"

namespace cape::net {

void Node::set_region(const std::string& where) {
  {
    std::lock_guard lk(mu_);
    if (region_ == where) return;
    region_ = where;
  }
  if (opt_.rank != 0) {
    Peer& m = *peers_[0];
    {
      std::lock_guard lk(mu_);
      if (!m.joined || m.closed) return;
    }
    PayloadWriter w;
    w.str(where);
    m.later(FrameType::region, std::move(w.buffer()));
  }
}

void Node::send_output(Stream stream, uint64_t region, std::string_view bytes) {
  if (opt_.rank == 0 || bytes.empty()) return;
  Peer& m = *peers_[0];
  {
    std::lock_guard lk(mu_);
    if (!m.joined || m.closed) return;
  }
  PayloadWriter head;
  head.u8(static_cast<uint8_t>(stream));
  head.u64(region);
  iovec v[2] = {iov_of(head.buffer().data(), head.buffer().size()), iov_of(bytes.data(), bytes.size())};
  IoResult r = m.send(FrameType::output, v, opt_.timeout);
  if (!r.ok()) CAPE_LOG_AT(info, "net") << "sending output to the master: " << r.describe();
}

void Node::broadcast_input(std::string_view chunk, bool eof) {
  if (opt_.rank != 0) return;
  uint8_t e = eof ? 1 : 0;
  iovec v[2] = {iov_of(&e, 1), iov_of(chunk.data(), chunk.size())};
  for (auto& p : peers_) {
    if (!p) continue;
    {
      std::lock_guard lk(mu_);
      if (!p->joined || p->closed || p->exited) continue;
    }
    IoResult r = p->send(FrameType::input, v, opt_.timeout);
    if (!r.ok()) CAPE_LOG_AT(info, "net") << "sending input to node " << p->rank << ": " << r.describe();
  }
}

void Node::report_state(uint64_t begin, const std::vector<uint8_t>& digest) {
  if (opt_.rank == 0) return;
  Peer& m = *peers_[0];
  {
    std::lock_guard lk(mu_);
    if (!m.joined || m.closed) return;
  }
  PayloadWriter w;
  w.u64(begin);
  w.bytes(digest);
  m.later(FrameType::state, w.buffer());  // before this slave's part, which the master compares after
}

std::vector<std::pair<int, std::vector<uint8_t>>> Node::states(uint64_t begin) {
  std::lock_guard lk(mu_);
  std::vector<std::pair<int, std::vector<uint8_t>>> out;
  auto it = states_.find(begin);
  if (it != states_.end()) out = std::move(it->second);
  states_.erase(states_.begin(), states_.upper_bound(begin));
  return out;
}

void Node::program_exited(int wait_status, bool in_window, const std::string& crash) {
  std::string region;
  {
    std::lock_guard lk(mu_);
    program_done_ = true;
    region = region_;
  }
  wake_waiters();
  PayloadWriter w;
  w.i32(wait_status);
  w.str(region);
  w.u8(in_window ? 1 : 0);
  w.str(crash);
  if (opt_.rank != 0) {
    Peer& m = *peers_[0];
    bool open;
    {
      std::lock_guard lk(mu_);
      open = m.joined && !m.closed;
    }
    if (open) m.send_small(FrameType::exited, w.buffer(), opt_.timeout);
    return;
  }
  if (!WaitStatus{wait_status}.ok()) {
    std::string msg = "node 0 (the master at " + opt_.label + ", pid " + std::to_string(::getpid()) +
                      "): program " + WaitStatus{wait_status}.describe() + " " +
                      (region.empty() ? "outside any parallel region" : "in " + region);
    fail(msg, true, WaitStatus{wait_status}.shell_code());
    return;
  }
  // A slave whose program ended badly outside a region, while the master's ended well: the
  // nodes did not run the same sequential code (node_reader.cpp kept it for now).
  {
    std::unique_lock lk(mu_);
    for (auto& p : peers_)
      if (p && p->exited && !WaitStatus{p->exit_status}.ok()) {
        std::string msg = p->who() + ": program " + WaitStatus{p->exit_status}.describe() + " " + region_of(*p) +
                          ", and the master's exited with status 0" + differ_hint(p->exit_status);
        int code = WaitStatus{p->exit_status}.shell_code();
        lk.unlock();
        fail(msg, true, code);
        return;
      }
  }
  for (auto& p : peers_) {
    if (!p) continue;
    bool open;
    {
      std::lock_guard lk(mu_);
      open = p->joined && !p->closed;
    }
    if (open) p->send_small(FrameType::exited, w.buffer(), opt_.timeout);
  }
  // Slaves run the same sequential tail and end soon after; give them `timeout`.
  std::unique_lock lk(mu_);
  auto running = [](const std::unique_ptr<Peer>& p) { return p && p->joined && !p->closed && !p->exited; };
  cv_.wait_for(lk, opt_.timeout, [&] { return std::none_of(peers_.begin(), peers_.end(), running); });
  std::vector<Peer*> late;
  for (auto& p : peers_)
    if (running(p)) late.push_back(p.get());
  lk.unlock();
  for (Peer* p : late) {
    CAPE_LOG_AT(warn, "net") << "node " << p->rank << " was still running " << seconds(opt_.timeout)
                             << " after the master's program ended; stopping it";
    p->send_small(FrameType::shutdown, {}, opt_.timeout);
  }
}

void Node::node_failed(int exit_code, const std::string& why) {
  if (exit_code < 1 || exit_code > 255) exit_code = 1;
  std::string region;
  {
    std::lock_guard lk(mu_);
    program_done_ = true;  // the master's EOF that may follow is no news
    region = region_;
  }
  wake_waiters();
  if (opt_.rank == 0) {
    fail("node 0 (the master at " + opt_.label + ", pid " + std::to_string(::getpid()) + "): " + why +
             " " + (region.empty() ? "outside any parallel region" : "in " + region),
         true, exit_code);
    return;
  }
  Peer& m = *peers_[0];
  {
    std::lock_guard lk(mu_);
    if (!m.joined || m.closed || failure_) return;  // the job has already failed
  }
  PayloadWriter w;
  w.i32(exit_code);
  w.str(why);
  m.send_small(FrameType::node_failed, w.buffer(), opt_.timeout);
}

}  // namespace cape::net
