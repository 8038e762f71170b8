#include "net/node.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <set>

#include "ckpt/format.h"
#include "net/handshake.h"
#include "util/error.h"
#include "util/log.h"
#include "util/wait_status.h"

namespace cape::net {

using Clock = std::chrono::steady_clock;

struct Node::Peer {
  int rank = -1;
  util::ScopedFd fd;
  std::string address;  // ip:port of the far end
  std::string host;     // the host name it announced
  int pid = 0;          // its cape node's pid
  std::string region;   // last region it reported
  bool joined = false;
  bool exited = false;  // sent its exit report
  int exit_status = 0;
  bool closed = false;  // reader finished
  std::timed_mutex send_mu;
  std::atomic<int64_t> last_send_ns{0};
  std::thread reader;
};

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string seconds(std::chrono::milliseconds ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return b;
}

std::string hostname() {
  char b[256] = {};
  if (::gethostname(b, sizeof b - 1) != 0) return "?";
  return b;
}

iovec iov_of(const void* p, size_t n) { return {const_cast<void*>(p), n}; }

}  // namespace

Node::Node(NodeOptions options) : opt_(std::move(options)) {
  if (opt_.size < 1 || opt_.rank < 0 || opt_.rank >= opt_.size)
    throw UserError("bad rank " + std::to_string(opt_.rank) + " for a job of " +
                    std::to_string(opt_.size) + " nodes");
  if (opt_.secret.empty()) throw UserError("no job secret");
  if (opt_.label.empty()) opt_.label = hostname();
  // One connection per slave on the master; one to the master on a slave.
  peers_.resize(static_cast<size_t>(opt_.size));
  for (int r = 0; r < opt_.size; ++r)
    if (r != opt_.rank && (opt_.rank == 0 || r == 0)) {
      peers_[r] = std::make_unique<Peer>();
      peers_[r]->rank = r;
    }
  if (opt_.rank == 0) {
    if (opt_.listen_fd >= 0)
      listen_fd_.reset(opt_.listen_fd);
    else
      listen_fd_ = listen_tcp(opt_.master.host, opt_.master.port);
    port_ = local_port(listen_fd_.get());
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) throw UserError(errno_message("pipe2"));
    wake_rd_.reset(p[0]);
    wake_wr_.reset(p[1]);
  }
}

Node::~Node() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (wake_wr_.valid()) {
    char c = 1;
    // A full pipe already wakes the acceptor; nothing else can go wrong here.
    if (::write(wake_wr_.get(), &c, 1) < 0 && errno != EAGAIN) {
      CAPE_LOG_AT(warn, "net") << errno_message("wake acceptor");
    }
  }
  for (auto& p : peers_)
    if (p && p->fd.valid()) ::shutdown(p->fd.get(), SHUT_RDWR);  // wakes its reader
  if (acceptor_.joinable()) acceptor_.join();
  if (heartbeat_.joinable()) heartbeat_.join();
  for (auto& p : peers_)
    if (p && p->reader.joinable()) p->reader.join();
}

void Node::start() {
  if (opt_.rank == 0) {
    acceptor_ = std::thread([this] { acceptor_loop(); });
    heartbeat_ = std::thread([this] { heartbeat_loop(); });
    std::unique_lock lk(mu_);
    bool all = cv_.wait_for(lk, opt_.connect_timeout, [&] {
      return joined_ == opt_.size - 1 || failure_ || stopping_;
    });
    if (failure_) throw UserError(*failure_);
    if (!all) {
      std::string missing;
      for (int r = 1; r < opt_.size; ++r)
        if (!peers_[r]->joined) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      throw UserError("only " + std::to_string(joined_) + " of " + std::to_string(opt_.size - 1) +
                      " slaves joined the master on port " + std::to_string(port_) + " within " +
                      seconds(opt_.connect_timeout) + "; missing rank(s) " + missing);
    }
    CAPE_LOG_AT(info, "net") << "all " << opt_.size - 1 << " slaves joined";
  } else {
    connect_to_master();
    heartbeat_ = std::thread([this] { heartbeat_loop(); });
  }
}

// ---- joining -------------------------------------------------------------------------

void Node::acceptor_loop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_rd_.get(), POLLIN, 0}};
    int r = ::poll(p, 2, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(errno_message("poll on the listening socket"), true);
      return;
    }
    {
      std::lock_guard lk(mu_);
      if (stopping_) return;
    }
    if (!(p[0].revents & POLLIN)) continue;
    util::ScopedFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      CAPE_LOG_AT(warn, "net") << errno_message("accept");
      continue;
    }
    // One handshake at a time, bounded by the timeout: a silent intruder delays joining by
    // at most that, and cannot get in.
    handshake_incoming(std::move(fd));
  }
}

void Node::handshake_incoming(util::ScopedFd fd) {
  std::string addr = peer_name(fd.get());
  set_nonblocking(fd.get());
  set_nodelay(fd.get());
  std::optional<Joiner> j = accept_slave(fd.get(), addr, opt_.secret, opt_.size, opt_.timeout, [&](int rank) {
    std::lock_guard lk(mu_);
    return peers_[rank]->joined ? "rank " + std::to_string(rank) + " has already joined" : std::string();
  });
  if (!j) return;
  Peer& p = *peers_[j->rank];
  {
    std::lock_guard lk(mu_);
    p.fd = std::move(fd);
    p.address = addr;
    p.host = j->host;
    p.pid = j->pid;
    p.joined = true;
    ++joined_;
  }
  CAPE_LOG_AT(info, "net") << "rank " << j->rank << " joined from " << addr << " (" << j->host << ", pid " << j->pid
                           << ")";
  start_peer(p);
  cv_.notify_all();
}

void Node::connect_to_master() {
  Peer& m = *peers_[0];
  util::ScopedFd fd = connect_tcp(opt_.master, opt_.connect_timeout);
  std::string addr = opt_.master.str();
  set_nonblocking(fd.get());
  set_nodelay(fd.get());
  join_master(fd.get(), addr, opt_.secret, {opt_.rank, opt_.size, opt_.label}, opt_.timeout);
  {
    std::lock_guard lk(mu_);
    m.fd = std::move(fd);
    m.address = addr;
    m.host = opt_.master.host;
    m.joined = true;
  }
  CAPE_LOG_AT(info, "net") << "rank " << opt_.rank << " joined the master at " << addr;
  start_peer(m);
}

void Node::start_peer(Peer& p) {
  p.last_send_ns = now_ns();
  p.reader = std::thread([this, &p] { reader_loop(p); });
}

// ---- receiving -----------------------------------------------------------------------

std::string Node::who(const Peer& p) const {
  std::string s = "node " + std::to_string(p.rank);
  if (p.rank == 0) s += " (the master";
  else s += " (";
  if (!p.host.empty()) s += (p.rank == 0 ? " at " : "") + p.host;
  if (p.pid) s += ", pid " + std::to_string(p.pid);
  return s + ")";
}

std::string Node::region_of(const Peer& p) const {
  const std::string& r = p.region.empty() ? region_ : p.region;
  return r.empty() ? "outside any parallel region" : "in " + r;
}

void Node::reader_loop(Peer& p) {
  for (;;) {
    Frame f;
    IoResult r = read_frame(p.fd.get(), f, opt_.max_payload, opt_.timeout);
    std::unique_lock lk(mu_);
    if (stopping_ || p.closed) break;
    if (r.ok()) {
      lk.unlock();
      on_frame(p, f);
      continue;
    }
    // A normal end: the peer reported its exit first, or our own program is done.
    if (r.status == IoStatus::eof && (p.exited || program_done_)) break;
    std::string w = who(p);
    std::string where = region_of(p);
    lk.unlock();
    std::string msg;
    if (r.status == IoStatus::eof)
      msg = w + " vanished (connection closed without an exit report: the node or its host died) " +
            where;
    else if (r.status == IoStatus::timeout)
      msg = w + " stopped answering (nothing for " + seconds(opt_.timeout) + ") " + where;
    else
      msg = w + ": " + r.describe() + " " + where;
    // The master reports; when the master itself is lost, slave 1 reports for the job.
    // Failed before marked closed, so no waiter sees "left the job" without the reason.
    fail(msg, opt_.rank == 0 || opt_.rank == 1);
    break;
  }
  {
    std::lock_guard lk(mu_);
    p.closed = true;
  }
  cv_.notify_all();
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
          msg = who(p) + " sent a malformed checkpoint frame";
        }
        fail(msg, true);
        return;
      }
      size_t offset = f.payload.size() - in.rest().size();
      {
        std::lock_guard lk(mu_);
        CAPE_LOG_AT(debug, "net") << "checkpoint '" << name << "' from node " << p.rank << " ("
                                  << f.payload.size() - offset << " bytes)";
        queues_[name].push_back(Queued{p.rank, std::move(f.payload), offset});
      }
      cv_.notify_all();
      return;
    }
    case FrameType::region: {
      PayloadReader in(f.payload);
      std::string r = in.str(4096);
      std::lock_guard lk(mu_);
      if (!in.failed()) p.region = r;
      return;
    }
    case FrameType::exited: {
      PayloadReader in(f.payload);
      int status = in.i32();
      std::string r = in.str(4096);
      std::string msg;
      {
        std::lock_guard lk(mu_);
        p.exit_status = status;
        if (!r.empty()) p.region = r;
        if (!WaitStatus{status}.ok())
          msg = who(p) + ": program " + WaitStatus{status}.describe() + " " + region_of(p);
      }
      CAPE_LOG_AT(info, "net") << "node " << p.rank << " program " << WaitStatus{status}.describe();
      // A slave ending with 0 is normal (001 Fig. 3, line 25); anything else ends the job.
      // The master's failing program is reported by the master itself. The job fails before
      // the peer is marked exited, so a waiter never reports "left the job" instead.
      if (!msg.empty()) fail(msg, opt_.rank == 0, WaitStatus{status}.shell_code());
      {
        std::lock_guard lk(mu_);
        p.exited = true;
      }
      cv_.notify_all();
      return;
    }
    case FrameType::abort: {
      PayloadReader in(f.payload);
      std::string msg = in.str(1 << 16);
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
      std::string why = in.str(4096);
      if (in.failed() || code < 1 || code > 255) code = 1;
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = who(p) + ": " + why + " " + region_of(p);
      }
      fail(msg, opt_.rank == 0, code);
      {
        std::lock_guard lk(mu_);
        p.exited = true;  // its EOF that follows is explained
      }
      cv_.notify_all();
      return;
    }
    case FrameType::shutdown: {
      CAPE_LOG_AT(info, "net") << "the master ended the job";
      {
        std::lock_guard lk(mu_);
        p.exited = true;  // the master's EOF that follows is normal
        p.closed = true;
      }
      cv_.notify_all();
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
        msg = who(p) + " sent a " + to_string(f.type) + " frame after the handshake";
      }
      fail(msg, true);
      return;
    }
  }
}

void Node::fail(const std::string& message, bool report, int exit_code) {
  fail_as_is(message + " (job exit status " + std::to_string(exit_code) + ")", report, exit_code);
}

void Node::fail_as_is(const std::string& message, bool report, int exit_code) {
  {
    std::lock_guard lk(mu_);
    if (failure_ || stopping_) return;
    failure_ = message;
    failure_exit_code_ = exit_code;
  }
  cv_.notify_all();
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
      (void)write_frame(p.fd.get(), FrameType::abort, {&v, 1}, std::chrono::milliseconds(500));
    }
  }
  if (opt_.on_failure) opt_.on_failure(message, report);
}

void Node::throw_failure() {
  std::lock_guard lk(mu_);
  assert(failure_);
  throw UserError(*failure_);
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

// ---- sending -------------------------------------------------------------------------

IoResult Node::send_frame(Peer& p, FrameType type, std::span<const iovec> parts) {
  std::unique_lock sl(p.send_mu);
  IoResult r = write_frame(p.fd.get(), type, parts, opt_.timeout);
  p.last_send_ns = now_ns();
  return r;
}

void Node::send_small(Peer& p, FrameType type, const std::vector<uint8_t>& payload) {
  iovec v = iov_of(payload.data(), payload.size());
  IoResult r = send_frame(p, type, {&v, 1});
  if (!r.ok()) {
    CAPE_LOG_AT(info, "net") << "sending " << to_string(type) << " to node " << p.rank << ": "
                             << r.describe();
  }
}

namespace {
std::vector<uint8_t> name_header(const std::string& name) {
  PayloadWriter w;
  w.str(name);
  return std::move(w.buffer());
}
}  // namespace

void Node::send(const ckpt::Checkpoint& ck, int node) {
  if (node < 0 || node >= opt_.size)
    throw UserError("send to node " + std::to_string(node) + ": the job has nodes 0.." +
                    std::to_string(opt_.size - 1));
  if (node == opt_.rank) {
    // To oneself: straight into the queue (the serialised form keeps one code path).
    std::vector<uint8_t> head = name_header(ck.name);
    ckpt::SerializedParts ser = ckpt::serialize_parts(ck, {.checksum = false});  // as on the wire
    Buffer bytes(head.begin(), head.end());
    size_t off = bytes.size();
    for (auto part : {std::span<const uint8_t>(ser.prefix), ser.data, std::span<const uint8_t>(ser.suffix)})
      bytes.insert(bytes.end(), part.begin(), part.end());
    {
      std::lock_guard lk(mu_);
      queues_[ck.name].push_back(Queued{opt_.rank, std::move(bytes), off});
    }
    cv_.notify_all();
    return;
  }
  if (opt_.rank != 0 && node != 0)
    throw UserError("send to node " + std::to_string(node) +
                    ": slaves talk only to the master (star topology)");
  Peer& p = *peers_[node];
  {
    std::lock_guard lk(mu_);
    if (failure_) throw UserError(*failure_);
    if (p.closed) throw UserError("send '" + ck.name + "' to " + who(p) + ": it has left the job");
  }
  std::vector<uint8_t> head = name_header(ck.name);
  // The run data is not copied, and not hashed twice: the frame's payload hash covers it.
  ckpt::SerializedParts body = ckpt::serialize_parts(ck, {.checksum = false});
  iovec v[4] = {iov_of(head.data(), head.size()), iov_of(body.prefix.data(), body.prefix.size()),
                iov_of(body.data.data(), body.data.size()), iov_of(body.suffix.data(), body.suffix.size())};
  IoResult r = send_frame(p, FrameType::checkpoint, v);
  if (!r.ok()) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = "sending checkpoint '" + ck.name + "' to " + who(p) + ": " + r.describe() + " " +
            region_of(p);
    }
    fail(msg, opt_.rank == 0 || opt_.rank == 1);
    throw_failure();
  }
}

void Node::broadcast(const ckpt::Checkpoint& ck) {
  if (opt_.rank != 0) throw UserError("broadcast '" + ck.name + "': only the master broadcasts");
  std::vector<uint8_t> head = name_header(ck.name);
  // Once for every slave, data not copied; the frame's payload hash covers it.
  ckpt::SerializedParts body = ckpt::serialize_parts(ck, {.checksum = false});
  iovec v[4] = {iov_of(head.data(), head.size()), iov_of(body.prefix.data(), body.prefix.size()),
                iov_of(body.data.data(), body.data.size()), iov_of(body.suffix.data(), body.suffix.size())};
  std::vector<Peer*> to;
  std::vector<int> fds;
  {
    std::lock_guard lk(mu_);
    if (failure_) throw UserError(*failure_);
    for (auto& p : peers_)
      if (p && p->joined && !p->closed && !p->exited) {
        to.push_back(p.get());
        fds.push_back(p->fd.get());
      }
  }
  std::vector<std::unique_lock<std::timed_mutex>> locks;
  for (Peer* p : to) locks.emplace_back(p->send_mu);
  auto results = write_frame_to_all(fds, FrameType::checkpoint, v, opt_.timeout);
  int64_t t = now_ns();
  for (Peer* p : to) p->last_send_ns = t;
  locks.clear();
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].ok()) {
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = "broadcasting '" + ck.name + "' to " + who(*to[i]) + ": " + results[i].describe() +
              " " + region_of(*to[i]);
      }
      fail(msg, true);
      throw_failure();
    }
}

// ---- waiting -------------------------------------------------------------------------

bool Node::can_still_arrive(int from) const {
  if (from == opt_.rank) return true;
  const Peer* p = peers_[from].get();
  return p && !p->closed && !p->exited;
}

ckpt::Checkpoint Node::decode(Queued&& q, const std::string& name) {
  try {
    // The frame's payload hash (checked on arrival) covers these bytes end to end, so the
    // sender leaves the file's own checksum out (0) and it is not checked here; the
    // structure is.
    ckpt::Checkpoint ck = ckpt::parse(std::move(q.frame), q.offset, {.verify_checksum = false});
    if (ck.name.empty()) ck.name = name;
    return ck;
  } catch (const ckpt::Error& e) {
    std::string msg = "checkpoint '" + name + "' from node " + std::to_string(q.from) +
                      " is invalid: " + e.what();
    fail(msg, true);
    throw UserError(msg);
  }
}

ckpt::Checkpoint Node::receive(const std::string& name) {
  std::unique_lock lk(mu_);
  for (;;) {
    auto it = queues_.find(name);
    if (it != queues_.end() && !it->second.empty()) {
      Queued q = std::move(it->second.front());
      it->second.pop_front();
      lk.unlock();
      return decode(std::move(q), name);
    }
    if (failure_) throw UserError(*failure_);
    if (stopping_) throw UserError("receive '" + name + "': the node is shutting down");
    bool anyone = false;
    for (const auto& p : peers_) anyone = anyone || (p && can_still_arrive(p->rank));
    if (!anyone) {
      if (opt_.size == 1)
        throw UserError("waiting for checkpoint '" + name + "': the job has one node, so no other node can send it");
      if (opt_.rank != 0) {
        const Peer& m = *peers_[0];
        throw UserError("waiting for checkpoint '" + name + "': the master has ended the job" +
                        (m.exited ? " (its program " + WaitStatus{m.exit_status}.describe() + ")"
                                  : std::string()));
      }
      throw UserError("waiting for checkpoint '" + name + "': every slave has left the job");
    }
    cv_.wait(lk);
  }
}

void Node::wait_for(const std::string& name,
                    const std::function<void(ckpt::Checkpoint&& part, int from)>& on_part) {
  if (opt_.rank != 0) throw UserError("wait_for '" + name + "': only the master waits for parts");
  std::set<int> pending;
  for (int r = 1; r < opt_.size; ++r) pending.insert(r);
  std::unique_lock lk(mu_);
  while (!pending.empty()) {
    auto it = queues_.find(name);
    bool took = false;
    if (it != queues_.end()) {
      for (auto q = it->second.begin(); q != it->second.end(); ++q) {
        if (!pending.count(q->from)) continue;  // a later region's part from a fast slave
        Queued item = std::move(*q);
        it->second.erase(q);
        int from = item.from;
        pending.erase(from);
        lk.unlock();
        on_part(decode(std::move(item), name), from);  // merged as it arrives (004)
        lk.lock();
        took = true;
        break;
      }
    }
    if (took) continue;
    if (failure_) throw UserError(*failure_);
    if (stopping_) throw UserError("wait_for '" + name + "': the node is shutting down");
    for (int r : pending)
      if (!can_still_arrive(r)) {
        const Peer& p = *peers_[r];
        std::string msg = who(p) + " left the job without sending its part of '" + name + "'" +
                          (p.exited ? " (its program " + WaitStatus{p.exit_status}.describe() + ")"
                                    : std::string()) +
                          " " + region_of(p);
        int code = p.exited && !WaitStatus{p.exit_status}.ok() ? WaitStatus{p.exit_status}.shell_code() : 1;
        lk.unlock();
        fail(msg, true, code);
        if (auto f = failure()) throw UserError(*f);  // this one, or an earlier failure
        throw UserError(msg);
      }
    cv_.wait(lk);
  }
}

// ---- life cycle ----------------------------------------------------------------------

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
    send_small(m, FrameType::region, w.buffer());
  }
}

void Node::program_exited(int wait_status) {
  std::string region;
  {
    std::lock_guard lk(mu_);
    program_done_ = true;
    region = region_;
  }
  cv_.notify_all();
  PayloadWriter w;
  w.i32(wait_status);
  w.str(region);
  if (opt_.rank != 0) {
    Peer& m = *peers_[0];
    bool open;
    {
      std::lock_guard lk(mu_);
      open = m.joined && !m.closed;
    }
    if (open) send_small(m, FrameType::exited, w.buffer());
    return;
  }
  if (!WaitStatus{wait_status}.ok()) {
    std::string msg = "node 0 (the master at " + opt_.label + ", pid " + std::to_string(::getpid()) +
                      "): program " + WaitStatus{wait_status}.describe() + " " +
                      (region.empty() ? "outside any parallel region" : "in " + region);
    fail(msg, true, WaitStatus{wait_status}.shell_code());
    return;
  }
  for (auto& p : peers_) {
    if (!p) continue;
    bool open;
    {
      std::lock_guard lk(mu_);
      open = p->joined && !p->closed;
    }
    if (open) send_small(*p, FrameType::exited, w.buffer());
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
    send_small(*p, FrameType::shutdown, {});
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
  cv_.notify_all();
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
  send_small(m, FrameType::node_failed, w.buffer());
}

// ---- heartbeats ----------------------------------------------------------------------

void Node::heartbeat_loop() {
  const int64_t interval = std::chrono::duration_cast<std::chrono::nanoseconds>(opt_.heartbeat).count();
  std::unique_lock lk(mu_);
  while (!stopping_) {
    cv_.wait_for(lk, opt_.heartbeat);
    if (stopping_) break;
    std::vector<Peer*> due;
    int64_t now = now_ns();
    for (auto& p : peers_)
      if (p && p->joined && !p->closed && now - p->last_send_ns >= interval) due.push_back(p.get());
    lk.unlock();
    for (Peer* p : due) {
      // A writer holding the lock is sending bytes, which already proves we are alive.
      std::unique_lock sl(p->send_mu, std::try_to_lock);
      if (!sl.owns_lock()) continue;
      IoResult r = write_frame(p->fd.get(), FrameType::heartbeat, {}, opt_.timeout);
      p->last_send_ns = now_ns();
      if (!r.ok()) {
        CAPE_LOG_AT(debug, "net") << "heartbeat to node " << p->rank << ": " << r.describe();
      }
    }
    lk.lock();
  }
}

}  // namespace cape::net
