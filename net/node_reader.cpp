// A node's incoming side: one reader thread per connection (or the monitor while it waits:
// node_wait.cpp) files checkpoints into the mailboxes, keeps what each peer reports (its region, its program's end), and fails the job
// when a peer vanishes, stops answering or breaks the protocol (docs/net.md).
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>

#include <mutex>

#include "ckpt/format.h"
#include "net/node.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"
#include "util/wait_status.h"

namespace cape::net {

std::string Node::region_of(const Peer& p) const {
  const std::string& r = p.region.empty() ? region_ : p.region;
  return r.empty() ? "outside any parallel region" : "in " + r;
}

std::string Node::differ_hint(int wait_status) {
  WaitStatus ws{wait_status};
  if (ws.kind() == WaitStatus::signaled) {
    switch (ws.signal()) {
      case SIGKILL: case SIGTERM: case SIGINT: case SIGHUP: case SIGQUIT: case SIGPIPE: return "";
      default: break;
    }
  }
  return " (their sequential parts differ)";
}

void Node::reader_loop(Peer& p) {
  const int64_t silence = std::chrono::duration_cast<std::chrono::nanoseconds>(opt_.timeout).count();
  bool use_epoll = p.ready.valid();
  for (;;) {
    int64_t quiet;
    {
      // Whatever was read ahead or has arrived (the monitor may hold read_mu: then it is
      // reading, and this waits until it gives the socket back).
      std::unique_lock rl(p.read_mu);
      Got g = read_one(p);
      if (g == Got::closed) return;
      if (g == Got::frame) continue;
      quiet = now_ns() - p.last_recv_ns;
      if (quiet >= silence) {
        end_of(p, IoResult{IoStatus::timeout, 0, {}});
        return;
      }
    }
    int ms = static_cast<int>((silence - quiet) / 1000000) + 1;
    if (use_epoll) {
      epoll_event ev;
      // The socket alone; a waiting monitor takes it out of this set (read_while_waiting).
      if (::epoll_wait(p.ready.get(), &ev, 1, ms) < 0 && errno != EINTR) {
        CAPE_LOG_AT(warn, "net") << errno_message("epoll_wait");
        use_epoll = false;  // poll() from now on (woken also for what a waiting monitor reads)
      }
    } else {
      pollfd q{p.fd.get(), POLLIN, 0};
      (void)::poll(&q, 1, ms);
    }
  }
}

Node::Got Node::read_one(Peer& p) {
  Frame f;
  IoResult r = read_frame(p.fd.get(), f, opt_.max_payload, opt_.timeout, std::nullopt, p.unseal(opt_.rank != 0),
                          &p.ahead, /*wait_for_start=*/false);
  if (r.status == IoStatus::nothing) return Got::nothing;
  if (!r.ok()) return end_of(p, r);
  {
    std::lock_guard lk(mu_);
    if (stopping_ || p.closed) {
      p.closed = true;
      return Got::closed;
    }
  }
  p.last_recv_ns = now_ns();
  if (f.type != FrameType::heartbeat) {
    p.bytes_in.fetch_add(f.payload.size(), std::memory_order_relaxed);
    p.frames_in.fetch_add(1, std::memory_order_relaxed);
  }
  on_frame(p, f);
  return Got::frame;
}

Node::Got Node::end_of(Peer& p, const IoResult& r) {
  std::unique_lock lk(mu_);
  // A normal end: the peer reported its exit first, or our own program is done. A reset
  // then is one too (issue 16, item 13): a node that closes with bytes unread (the other
  // end's last heartbeats, which a loaded machine leaves unread more often) makes the
  // kernel reset the connection instead of closing it. Whatever the peer sent before it
  // is still read first (the exit report among it); after it there is nothing to lose.
  bool reset = r.status == IoStatus::error && (r.err == ECONNRESET || r.err == EPIPE);
  bool normal = stopping_ || p.closed || ((r.status == IoStatus::eof || reset) && (p.exited || program_done_));
  // Every frame it sent has been read: a lock it still holds that another node waits for
  // would never come (Node::revoke left a closed holder's release to this point).
  std::optional<std::string> held;
  if (normal && !stopping_ && !p.closed && opt_.rank == 0 && !failure_) held = locks_.awaited_from(p.rank);
  if (held) {
    std::string msg = p.who() + " left the job holding lock '" + util::printable(*held) +
                      "', which another node waits for " + region_of(p);
    lk.unlock();
    fail(msg, true);
    lk.lock();
  } else if (!normal) {
    std::string w = p.who();
    std::string where = region_of(p);
    lk.unlock();
    std::string msg;
    if (r.status == IoStatus::eof)
      msg = w + " vanished (connection closed without an exit report: the node or its host died) " + where;
    else if (r.status == IoStatus::timeout)
      msg = w + " stopped answering (nothing for " + seconds(opt_.timeout) + ") " + where;
    else
      msg = w + ": " + r.describe() + " " + where;
    // The master reports; when the master itself is lost, slave 1 reports for the job.
    // Failed before marked closed, so no waiter sees "left the job" without the reason.
    fail(msg, opt_.rank == 0 || opt_.rank == 1);
    lk.lock();
  }
  p.closed = true;
  lk.unlock();
  wake_waiters();
  return Got::closed;
}

void Node::on_frame(Peer& p, Frame& f) {
  switch (f.type) {
    case FrameType::heartbeat:
      return;
    case FrameType::checkpoint: {
      PayloadReader in(f.payload);
      std::string name = in.str(ckpt::kMaxNameLength);
      if (in.failed()) {
        std::string msg;
        {
          std::lock_guard lk(mu_);
          msg = p.who() + " sent a malformed checkpoint frame";
        }
        fail(msg, true);
        return;
      }
      size_t offset = f.payload.size() - in.rest().size();
      {
        std::lock_guard lk(mu_);
        CAPE_LOG_AT(debug, "net") << "checkpoint '" << name << "' from node " << p.rank << " ("
                                  << f.payload.size() - offset << " bytes)";
        mail_.put(name, Mail{p.rank, std::move(f.payload), offset});
      }
      wake_waiters();
      return;
    }
    case FrameType::region: {
      PayloadReader in(f.payload);
      // What a peer says reaches messages and logs escaped (issue 16, item 5).
      std::string r = util::printable(in.str(4096));
      std::lock_guard lk(mu_);
      if (!in.failed()) p.region = r;
      return;
    }
    case FrameType::exited: {
      PayloadReader in(f.payload);
      int status = in.i32();
      std::string r = util::printable(in.str(4096));
      bool in_window = in.at_end() || in.u8() != 0;  // (older nodes did not say: as if inside)
      // A crash's first frames, shown under the message (each line escaped on its own).
      std::string frames;
      std::string crash = in.at_end() ? std::string() : in.str(16384);
      if (!in.failed())
        for (std::string_view rest = crash; !rest.empty();) {
          size_t nl = rest.find('\n');
          frames += "\n" + util::printable(rest.substr(0, nl));
          rest = nl == std::string_view::npos ? "" : rest.substr(nl + 1);
        }
      std::string msg;
      {
        std::lock_guard lk(mu_);
        p.exit_status = status;
        if (!r.empty()) p.region = r;
        if (!WaitStatus{status}.ok())
          msg = p.who() + ": program " + WaitStatus{status}.describe() + " " + region_of(p);
      }
      CAPE_LOG_AT(info, "net") << "node " << p.rank << " program " << WaitStatus{status}.describe()
                               << (in_window ? " inside a region" : " outside any region");
      // A slave ending with 0 is normal (001 Fig. 3, line 25); anything else inside a region
      // ends the job. Outside one, the master runs the same sequential code and ends the
      // same way, after printing what it prints first (program_exited): the job fails only
      // when the master needs that slave or ends differently. The master's failing program
      // is reported by the master itself. The job fails before the peer is marked exited,
      // so a waiter never reports "left the job" instead.
      if (!msg.empty() && (in_window || opt_.rank != 0)) {
        int code = WaitStatus{status}.shell_code();
        fail_as_is(msg + " (job exit status " + std::to_string(code) + ")" + frames, opt_.rank == 0, code);
      }
      {
        std::lock_guard lk(mu_);
        p.exited = true;
      }
      wake_waiters();
      return;
    }
    case FrameType::abort: {
      PayloadReader in(f.payload);
      std::string msg = util::printable(in.str(1 << 16));
      int code = in.i32();  // after the message (older masters sent none: 1)
      if (in.failed() || code < 1 || code > 255) code = 1;
      fail_as_is(msg, false, code);  // the master printed it
      std::lock_guard lk(mu_);
      p.closed = true;
      return;
    }
    case FrameType::node_failed: {
      PayloadReader in(f.payload);
      int code = in.i32();
      std::string why = util::printable(in.str(4096));
      if (in.failed() || code < 1 || code > 255) code = 1;
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = p.who() + ": " + why + " " + region_of(p);
      }
      fail(msg, opt_.rank == 0, code);
      {
        std::lock_guard lk(mu_);
        p.exited = true;  // its EOF that follows is explained
      }
      wake_waiters();
      return;
    }
    case FrameType::output: {
      PayloadReader in(f.payload);
      uint8_t s = in.u8();
      uint64_t region = in.u64();
      std::span<const uint8_t> bytes = in.rest();
      if (in.failed() || (s != static_cast<uint8_t>(Stream::out) && s != static_cast<uint8_t>(Stream::err))) {
        std::string msg;
        {
          std::lock_guard lk(mu_);
          msg = p.who() + " sent a malformed output frame";
        }
        fail(msg, true);
        return;
      }
      if (opt_.on_output)
        opt_.on_output(p.rank, static_cast<Stream>(s), region,
                       std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      return;
    }
    case FrameType::input: {
      PayloadReader in(f.payload);
      bool eof = in.u8() != 0;
      std::span<const uint8_t> bytes = in.rest();
      if (in.failed()) {
        std::string msg;
        {
          std::lock_guard lk(mu_);
          msg = p.who() + " sent a malformed input frame";
        }
        fail(msg, true);
        return;
      }
      if (opt_.on_input)
        opt_.on_input(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), eof);
      return;
    }
    case FrameType::state: {
      PayloadReader in(f.payload);
      uint64_t begin = in.u64();
      std::span<const uint8_t> digest = in.rest();
      if (in.failed()) {
        std::string msg;
        {
          std::lock_guard lk(mu_);
          msg = p.who() + " sent a malformed state frame";
        }
        fail(msg, true);
        return;
      }
      std::lock_guard lk(mu_);
      states_[begin].emplace_back(p.rank, std::vector<uint8_t>(digest.begin(), digest.end()));
      return;
    }
    case FrameType::lock_request:
    case FrameType::lock_grant:
    case FrameType::lock_release:
    case FrameType::lock_revoke:
      return on_lock_frame(p, f);
    case FrameType::page_request:
    case FrameType::page_data:
      return on_page_frame(p, f);
    case FrameType::shutdown: {
      CAPE_LOG_AT(info, "net") << "the master ended the job";
      {
        std::lock_guard lk(mu_);
        p.exited = true;  // the master's EOF that follows is normal
        p.closed = true;
      }
      wake_waiters();
      if (opt_.on_shutdown) opt_.on_shutdown();
      return;
    }
    case FrameType::challenge:
    case FrameType::auth:
    case FrameType::auth_ok:
    case FrameType::refused: {
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = p.who() + " sent a " + to_string(f.type) + " frame after the handshake";
      }
      fail(msg, true);
      return;
    }
  }
}

}  // namespace cape::net
