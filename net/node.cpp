// A node's star (node.h): joining (the acceptor and the handshake of handshake.h), and the
// checkpoint operations: send, broadcast, receive and wait_for. The other concerns have
// their own files: peer.h (one connection and its writes), mailboxes.h (arrivals by name),
// node_reader.cpp (incoming frames), node_failure.cpp, node_life.cpp, heartbeat.cpp.
#include "net/node.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <set>
#include <thread>

#include "ckpt/format.h"
#include "net/handshake.h"
#include "util/error.h"
#include "util/log.h"
#include "util/spin.h"
#include "util/wait_status.h"

namespace cape::net {

namespace {

std::string hostname() {
  char b[256] = {};
  if (::gethostname(b, sizeof b - 1) != 0) return "?";
  return b;
}

std::vector<uint8_t> name_header(const std::string& name) {
  PayloadWriter w;
  w.str(name);
  return std::move(w.buffer());
}

}  // namespace

Node::Node(NodeOptions options) : opt_(std::move(options)) {
  if (opt_.size < 1 || opt_.rank < 0 || opt_.rank >= opt_.size)
    throw UserError("bad rank " + std::to_string(opt_.rank) + " for a job of " +
                    std::to_string(opt_.size) + " nodes");
  if (opt_.secret.empty()) throw UserError("no job secret");
  if (opt_.label.empty()) opt_.label = hostname();
  if (opt_.waiter_reads) {
    waiter_wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!waiter_wake_.valid()) opt_.waiter_reads = false;  // the readers read everything, as before
  }
  // One connection per slave on the master; one to the master on a slave.
  peers_.resize(static_cast<size_t>(opt_.size));
  for (int r = 0; r < opt_.size; ++r)
    if (r != opt_.rank && (opt_.rank == 0 || r == 0)) {
      peers_[r] = std::make_unique<Peer>();
      peers_[r]->rank = r;
    }
  if (opt_.rank == 0) {
    session_.nonce = random_nonce();
    session_.encrypt = opt_.encrypt;
    // The local Unix socket (socket.h) before the TCP port whenever its name is known: a slave
    // that finds the TCP port open then finds it too (slaves try it first in every round).
    auto listen_unix = [&](uint16_t port) {
      unix_listen_fd_ = listen_local_unix(local_unix_name(opt_.secret, port));
      if (!unix_listen_fd_.valid())
        CAPE_LOG_AT(info, "net") << errno_message("listen on the local Unix socket") << ": local slaves join over TCP";
    };
    if (opt_.unix_listen_fd >= 0) {
      unix_listen_fd_.reset(opt_.unix_listen_fd);
      if (!opt_.local_unix) unix_listen_fd_.reset();
    } else if (opt_.local_unix && opt_.listen_fd < 0 && opt_.master.port != 0) {
      listen_unix(opt_.master.port);
    }
    if (opt_.listen_fd >= 0)
      listen_fd_.reset(opt_.listen_fd);
    else
      listen_fd_ = listen_tcp(opt_.master.host, opt_.master.port);
    port_ = local_port(listen_fd_.get());
    // A slave that connected over TCP before this exists goes on over TCP: correct, slower.
    if (opt_.local_unix && !unix_listen_fd_.valid() && opt_.unix_listen_fd < 0 &&
        (opt_.listen_fd >= 0 || opt_.master.port == 0))
      listen_unix(port_);
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
    if (lease_grants_)
      CAPE_LOG_AT(info, "calls") << "rank " << opt_.rank << ": " << lease_grants_ << " lock leases granted, "
                                 << lease_entries_ << " entries under a lease without asking, " << lease_renewals_
                                 << " renewed into the next window, " << lease_revokes_
                                 << " asked back";
    if (releases_now_ || releases_later_ || grants_spun_ || grants_slept_)
      CAPE_LOG_AT(info, "calls") << "rank " << opt_.rank << ": " << releases_now_
                                 << " lock releases sent at once (awaited), " << releases_later_
                                 << " sent by the heartbeat thread; " << grants_spun_
                                 << " grants caught while polling without sleeping, " << grants_slept_
                                 << " after sleeping";
    if (const util::SpinGateStats g = util::spin_gate_stats(); g.fit || g.fit_own || g.closed) {
      CAPE_LOG_AT(info, "calls") << "rank " << opt_.rank << ": spin gate (CAPE_SPIN_GATE): " << g.fit
                                 << " checks fit the CPUs, " << g.fit_own << " fit without the job's own tasks, "
                                 << g.closed << " did not (the job's tasks read " << g.own_checks << " times, "
                                 << (g.own_checks ? g.own_ns / g.own_checks / 1000.0 : 0.0) << " us each)";
    }
    if (lock_frames_spun_ || lock_frames_slept_)
      CAPE_LOG_AT(info, "calls") << "rank " << opt_.rank << ": lock frames read by the waiting monitor while polling "
                                 << "without sleeping (CAPE_MASTER_SPIN_US): " << lock_frames_spun_ << ", after sleeping: "
                                 << lock_frames_slept_;
  }
  wake_waiters();
  heartbeat_cv_.notify_all();
  if (wake_wr_.valid()) {
    char c = 1;
    // A full pipe already wakes the acceptor; nothing else can go wrong here.
    if (::write(wake_wr_.get(), &c, 1) < 0 && errno != EAGAIN) {
      CAPE_LOG_AT(warn, "net") << errno_message("wake acceptor");
    }
  }
  // How the connections end (issue 16, item 13). A socket closed with bytes unread makes the
  // kernel reset the connection, and so does one shut for reading when more bytes arrive;
  // a reset drops what this node had not sent yet: its last frames (its part, its exit
  // report) for a peer that was slow to read (a loaded machine), which then read a
  // truncated frame. So: the FIN goes after whatever is queued, the readers go on reading
  // until every peer has all of it (at once on an idle link; bounded by the silence bound
  // for a slow peer, by the abort's once the job has failed: a stopped peer reads nothing),
  // and only then are they woken and the sockets closed. A reset after that loses nothing:
  // the peer reads what it received before it.
  // No frame is cut short by it: the heartbeats stop first, and a writer under way (a
  // reader answering a page request) ends its frame.
  if (acceptor_.joinable()) acceptor_.join();
  if (heartbeat_.joinable()) heartbeat_.join();
  std::vector<int> fds;
  for (auto& p : peers_)
    if (p && p->fd.valid()) {
      std::unique_lock sl(p->send_mu, std::defer_lock);
      (void)sl.try_lock_for(opt_.timeout);  // a writer stuck on a stalled peer gives up by then
      ::shutdown(p->fd.get(), SHUT_WR);
      fds.push_back(p->fd.get());
    }
  bool failed;
  {
    std::lock_guard lk(mu_);
    failed = failing_ || failure_.has_value();
  }
  wait_until_delivered(fds, failed ? std::chrono::milliseconds(500) : opt_.timeout);
  for (int fd : fds) ::shutdown(fd, SHUT_RD);  // wakes its reader
  for (auto& p : peers_)
    if (p && p->reader.joinable()) p->reader.join();
  CAPE_LOG_AT(info, "traffic") << [&] {
    uint64_t bo = 0, fo = 0, bi = 0, fi = 0;
    for (auto& p : peers_)
      if (p) bo += p->bytes_out, fo += p->frames_out, bi += p->bytes_in, fi += p->frames_in;
    return "sent " + std::to_string(bo) + " bytes in " + std::to_string(fo) + " frames, received " +
           std::to_string(bi) + " bytes in " + std::to_string(fi) + " frames";
  }();
}

void Node::start() {
  if (opt_.rank == 0) {
    acceptor_ = std::thread([this] { acceptor_loop(); });
    heartbeat_ = std::thread([this] { heartbeat_loop(); });
    std::unique_lock lk(mu_);
    bool all = cv_.wait_for(lk, opt_.connect_timeout, [&] {
      return joined_ == opt_.size - 1 || failure_ || stopping_;
    });
    if (failure_) throw UserError(*failure_, failure_exit_code_);
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
  // Joins the handshake threads that are done; all of them (after waking them) at the end.
  auto reap = [this](bool all) {
    if (all) {
      std::lock_guard lk(mu_);
      for (Handshake& h : handshakes_)
        if (h.fd.valid()) ::shutdown(h.fd.get(), SHUT_RDWR);
    }
    for (auto it = handshakes_.begin(); it != handshakes_.end();) {
      if (all || it->done) {
        it->thread.join();
        it = handshakes_.erase(it);
      } else {
        ++it;
      }
    }
  };
  for (;;) {
    // p[2]: the local Unix socket (fd -1, never ready, when there is none).
    pollfd p[3] = {{listen_fd_.get(), POLLIN, 0}, {wake_rd_.get(), POLLIN, 0}, {unix_listen_fd_.get(), POLLIN, 0}};
    // A tick while handshakes run, so that finished ones are joined.
    int r = ::poll(p, 3, handshakes_.empty() ? -1 : 100);
    if (r < 0) {
      if (errno == EINTR) continue;
      reap(true);
      fail(errno_message("poll on the listening socket"), true);
      return;
    }
    {
      std::lock_guard lk(mu_);
      if (stopping_) break;
    }
    reap(false);
    int from = (p[0].revents & POLLIN) ? listen_fd_.get() : (p[2].revents & POLLIN) ? unix_listen_fd_.get() : -1;
    if (from < 0) continue;
    util::ScopedFd fd(::accept4(from, nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      CAPE_LOG_AT(warn, "net") << errno_message("accept");
      continue;
    }
    if (handshakes_.size() >= kMaxHandshakes) {
      CAPE_LOG_AT(info, "net") << "closed a connection from " << peer_name(fd.get()) << ": " << kMaxHandshakes
                               << " handshakes are under way";
      continue;
    }
    // Concurrently, each within the timeout (issue 16, item 1): strangers that connect and
    // say nothing, or a byte now and then, cannot hold up the slaves' joins.
    Handshake& h = handshakes_.emplace_back();
    {
      std::lock_guard lk(mu_);
      h.fd = std::move(fd);
    }
    h.thread = std::thread([this, &h] {
      handshake_incoming(h);
      h.done = true;
    });
  }
  reap(true);
}

void Node::handshake_incoming(Handshake& h) {
  int fd = h.fd.get();  // the acceptor only shuts it down, under mu_, while this thread runs
  std::string addr = peer_name(fd);
  set_nonblocking(fd);
  set_nodelay(fd);
  if (is_unix_socket(fd)) (void)widen_unix_buffer(fd);  // (the same host: what the slave got)
  int claimed = -1;  // the rank this connection holds while it finishes its handshake
  std::optional<Joiner> j = accept_slave(
      fd, addr, opt_.secret, opt_.size, opt_.timeout,
      [&](int rank) {
        std::lock_guard lk(mu_);
        Peer& p = *peers_[rank];
        if (p.joined || p.claimed) return "rank " + std::to_string(rank) + " has already joined";
        p.claimed = true;
        claimed = rank;
        return std::string();
      },
      opt_.job, session_,
      [this] {
        std::lock_guard lk(mu_);
        return failing_ || stopping_;
      });
  if (!j) {
    if (claimed >= 0) {
      std::lock_guard lk(mu_);
      peers_[claimed]->claimed = false;
    }
    std::lock_guard lk(mu_);
    h.fd.reset();
    return;
  }
  Peer& p = *peers_[j->rank];
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    p.fd = std::move(h.fd);
    p.address = addr;
    p.host = j->host;
    p.pid = j->pid;
    p.keys = j->keys;
    p.joined = true;
    ++joined_;
  }
  CAPE_LOG_AT(info, "net") << "rank " << j->rank << " joined from " << addr << " (" << j->host << ", pid " << j->pid
                           << ")";
  start_peer(p);
  wake_waiters();
}

void Node::connect_to_master() {
  Peer& m = *peers_[0];
  std::string addr = opt_.master.str();
  // A handshake that did not happen (the master stopped or overloaded past the timeout, the
  // connection closed) is tried again until connect_timeout: a loaded machine only makes
  // the join slower (issue 16). Refusals end it at once.
  const auto deadline = std::chrono::steady_clock::now() + opt_.connect_timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    util::ScopedFd fd = connect_master(std::max(left, std::chrono::milliseconds(0)));
    set_nonblocking(fd.get());
    set_nodelay(fd.get());
    // The master bounds its side of the handshake by `timeout` from its accept, which a loaded
    // master reaches late (the connection waits in its listen queue meanwhile): the slave
    // waits for its answers until the join deadline. With a deadline of its own, `timeout`
    // from its connect, a slave hung up just before the master's auth_ok: the master had it
    // joined and then lost it, and its next try was refused (issue 16, item 13).
    auto wait = std::max(opt_.timeout, std::chrono::duration_cast<std::chrono::milliseconds>(
                                           deadline - std::chrono::steady_clock::now()));
    try {
      FrameKeys keys = join_master(fd.get(), addr, opt_.secret, {opt_.rank, opt_.size, opt_.label, opt_.job}, wait);
      {
        std::lock_guard lk(mu_);
        m.keys = keys;
        m.fd = std::move(fd);
        m.address = addr;
        m.host = opt_.master.host;
        m.joined = true;
      }
      break;
    } catch (const HandshakeLost& e) {
      if (std::chrono::steady_clock::now() >= deadline || (opt_.cancelled && opt_.cancelled())) throw;
      CAPE_LOG_AT(info, "net") << e.what() << "; trying again";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  CAPE_LOG_AT(info, "net") << "rank " << opt_.rank << " joined the master at " << addr
                           << (is_unix_socket(m.fd.get()) ? " over its local Unix socket" : "");
  start_peer(m);
}

util::ScopedFd Node::connect_master(std::chrono::milliseconds deadline_after) {
  if (!opt_.local_unix) return connect_tcp(opt_.master, deadline_after, opt_.cancelled);
  // The master's local Unix socket first (socket.h), in every round: it exists only on the
  // master's host, and there before its TCP port opens (the Node constructor), so a slave
  // that starts before its master still ends up on it.
  const std::string name = local_unix_name(opt_.secret, opt_.master.port);
  const auto deadline = std::chrono::steady_clock::now() + deadline_after;
  std::string last = "timed out";
  for (int round = 0;; ++round) {
    if (util::ScopedFd fd = connect_local_unix(name); fd.valid()) return fd;
    if (util::ScopedFd fd = try_connect_tcp(opt_.master, last); fd.valid()) return fd;
    if (std::chrono::steady_clock::now() >= deadline)
      throw UserError("cannot connect to the master at " + opt_.master.str() + ": " + last);
    if (opt_.cancelled && opt_.cancelled())
      throw UserError("stopped connecting to the master at " + opt_.master.str() + " (" + last +
                      "): the launcher is gone");
    // Retry pacing while the master starts, as connect_tcp's (the deadline bounds it).
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20 * (round + 1), 200)));
  }
}

void Node::start_peer(Peer& p) {
  p.last_send_ns = now_ns();
  p.last_recv_ns = now_ns();
  // The reader's own set of this one socket (node.h, "Who reads"); without it (no epoll: out
  // of memory or descriptors) the reader polls the socket and the monitor leaves it alone.
  util::ScopedFd ready(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (ready.valid() && ::epoll_ctl(ready.get(), EPOLL_CTL_ADD, p.fd.get(), &ev) == 0)
    p.ready = std::move(ready);
  else
    CAPE_LOG_AT(warn, "net") << errno_message("epoll for " + p.address) << ": the reader polls";
  p.reader = std::thread([this, &p] { reader_loop(p); });
}

// ---- sending -------------------------------------------------------------------------

void Node::ask_master(FrameType type, const std::vector<uint8_t>& payload, const std::string& what) {
  Peer& m = *peers_[0];
  IoResult r = m.send(type, {std::array<iovec, 1>{iov_of(payload.data(), payload.size())}}, opt_.timeout);
  if (r.ok()) return;
  std::string msg;
  {
    std::lock_guard lk(mu_);
    msg = "asking " + m.who() + " for " + what + ": " + r.describe();
  }
  fail(msg, true);
  throw_failure();
}

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
      mail_.put(ck.name, Mail{opt_.rank, std::move(bytes), off});
    }
    wake_waiters();
    return;
  }
  if (opt_.rank != 0 && node != 0)
    throw UserError("send to node " + std::to_string(node) +
                    ": slaves talk only to the master (star topology)");
  if (opt_.rank != 0) return_leases();  // docs/critical.md, "Lock leases"
  Peer& p = *peers_[node];
  {
    std::unique_lock lk(mu_);
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (p.exited && !WaitStatus{p.exit_status}.ok()) {
      // Its program ended outside a region (program_exited): now the job needs it.
      std::string msg = "send '" + ck.name + "' to " + p.who() + ": its program " +
                        WaitStatus{p.exit_status}.describe() + " " + region_of(p) +
                        ", and this node's did not" + differ_hint(p.exit_status);
      int code = WaitStatus{p.exit_status}.shell_code();
      lk.unlock();
      fail(msg, true, code);
      throw_failure();
    }
    if (p.closed) throw UserError("send '" + ck.name + "' to " + p.who() + ": it has left the job");
  }
  std::vector<uint8_t> head = name_header(ck.name);
  // The run data is not copied, and not hashed twice: the frame's payload hash covers it.
  ckpt::SerializedParts body = ckpt::serialize_parts(ck, {.checksum = false});
  iovec v[4] = {iov_of(head.data(), head.size()), iov_of(body.prefix.data(), body.prefix.size()),
                iov_of(body.data.data(), body.data.size()), iov_of(body.suffix.data(), body.suffix.size())};
  IoResult r = p.send(FrameType::checkpoint, v, opt_.timeout);
  if (!r.ok()) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = "sending checkpoint '" + ck.name + "' to " + p.who() + ": " + r.describe() + " " +
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
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    for (auto& p : peers_)
      if (p && p->joined && !p->closed && !p->exited) {
        to.push_back(p.get());
        fds.push_back(p->fd.get());
      }
  }
  std::vector<std::unique_lock<std::timed_mutex>> locks;
  for (Peer* p : to) locks.emplace_back(p->send_mu);
  // One sealed frame for every slave: the master's key is the same towards all of them, the
  // broadcast stream's number is the job's (net/frame.h).
  std::vector<IoResult> results;
  if (!to.empty())
    results = write_frame_to_all(fds, FrameType::checkpoint, v, opt_.timeout,
                                 Seal{&to.front()->keys.send, kBroadcastStream, ++broadcast_seq_, session_.encrypt});
  int64_t t = now_ns();
  uint64_t bytes = 0;
  for (const iovec& x : v) bytes += x.iov_len;
  for (Peer* p : to) {
    p->last_send_ns = t;
    p->bytes_out.fetch_add(bytes, std::memory_order_relaxed);
    p->frames_out.fetch_add(1, std::memory_order_relaxed);
  }
  locks.clear();
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].ok()) {
      std::string msg;
      {
        std::lock_guard lk(mu_);
        msg = "broadcasting '" + ck.name + "' to " + to[i]->who() + ": " + results[i].describe() +
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

ckpt::Checkpoint Node::decode(Mail&& m, const std::string& name) {
  int from = m.from;
  try {
    return open_mail(std::move(m), name);
  } catch (const ckpt::Error& e) {
    std::string msg = "checkpoint '" + name + "' from node " + std::to_string(from) +
                      " is invalid: " + e.what();
    fail(msg, true);
    throw UserError(msg);
  }
}

ckpt::Checkpoint Node::receive(const std::string& name) { return receive_until(name, 0); }

ckpt::Checkpoint Node::receive_until(const std::string& name, int64_t spin_until) {
  std::unique_lock lk(mu_);
  for (;;) {
    if (std::optional<Mail> m = mail_.take(name)) {
      lk.unlock();
      return decode(std::move(*m), name);
    }
    if (failure_) throw UserError(*failure_, failure_exit_code_);
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
    std::vector<Peer*> from;
    for (const auto& p : peers_)
      if (p && can_still_arrive(p->rank)) from.push_back(p.get());
    read_while_waiting(lk, from, spin_until);
  }
}

void Node::wait_for(const std::string& name,
                    const std::function<void(ckpt::Checkpoint&& part, int from)>& on_part) {
  if (opt_.rank != 0) throw UserError("wait_for '" + name + "': only the master waits for parts");
  std::set<int> pending;
  for (int r = 1; r < opt_.size; ++r) pending.insert(r);
  // (wait_spin: polled without sleeping at first and after each lock frame, node.h.)
  const int64_t spin_ns = slave_locks_.load() ? opt_.wait_spin.count() * 1000 : 0;
  const int64_t spin_until = spin_ns ? now_ns() + spin_ns : 0;
  CAPE_LOG_AT(debug, "locks") << "waiting for the slaves' parts of '" << name << "'";
  std::unique_lock lk(mu_);
  while (!pending.empty()) {
    if (std::optional<Mail> m = mail_.take_from(name, pending)) {
      int from = m->from;
      pending.erase(from);
      lk.unlock();
      on_part(decode(std::move(*m), name), from);  // merged as it arrives (004)
      lk.lock();
      continue;
    }
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (stopping_) throw UserError("wait_for '" + name + "': the node is shutting down");
    for (int r : pending)
      if (!can_still_arrive(r)) {
        const Peer& p = *peers_[r];
        std::string msg = p.who() + " left the job without sending its part of '" + name + "'" +
                          (p.exited ? " (its program " + WaitStatus{p.exit_status}.describe() + ")"
                                    : std::string()) +
                          " " + region_of(p);
        int code = p.exited && !WaitStatus{p.exit_status}.ok() ? WaitStatus{p.exit_status}.shell_code() : 1;
        lk.unlock();
        fail(msg, true, code);
        if (auto f = failure()) throw UserError(*f, failure_exit_code().value_or(1));  // this one, or an earlier failure
        throw UserError(msg);
      }
    std::vector<Peer*> from;
    for (int r : pending) from.push_back(peers_[r].get());
    read_while_waiting(lk, from, spin_until, spin_ns);
  }
}

}  // namespace cape::net
