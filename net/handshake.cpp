#include "net/handshake.h"

#include <unistd.h>

#include <algorithm>

#include "net/frame.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace cape::net {

namespace {
iovec iov_of(const void* p, size_t n) { return {const_cast<void*>(p), n}; }

using Clock = std::chrono::steady_clock;

// What is left of the handshake's time (at least 1 ms, so that a write still tries once).
std::chrono::milliseconds left(Clock::time_point deadline) {
  auto l = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(l, std::chrono::milliseconds(1));
}
}  // namespace

std::optional<Joiner> accept_slave(int fd, const std::string& addr, const Secret& secret, int job_size,
                                   std::chrono::milliseconds timeout,
                                   const std::function<std::string(int rank)>& may_join, const std::string& job) {
  // One deadline for the whole handshake: a peer that sends a byte now and then cannot hold
  // it longer than `timeout` (issue 16, item 1).
  const auto deadline = Clock::now() + timeout;
  Nonce nm = random_nonce();
  {
    PayloadWriter w;
    w.bytes(nm);
    iovec v = iov_of(w.buffer().data(), w.buffer().size());
    IoResult r = write_frame(fd, FrameType::challenge, {&v, 1}, left(deadline));
    if (!r.ok()) {
      CAPE_LOG_AT(warn, "net") << "connection from " << addr << " dropped during the handshake: "
                               << r.describe();
      return std::nullopt;
    }
  }
  Frame f;
  IoResult r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  auto refuse = [&](const std::string& why) -> std::optional<Joiner> {
    CAPE_LOG_AT(warn, "net") << "refused a connection from " << addr << ": " << why;
    PayloadWriter w;
    w.str(why);
    iovec v = iov_of(w.buffer().data(), w.buffer().size());
    (void)write_frame(fd, FrameType::refused, {&v, 1}, std::chrono::milliseconds(200));
    return std::nullopt;
  };
  if (!r.ok()) return refuse("no valid authentication (" + r.describe() + ")");
  if (f.type != FrameType::auth) return refuse(std::string("expected auth, got ") + to_string(f.type));
  PayloadReader in(f.payload);
  int rank = in.i32();
  int size = in.i32();
  int pid = in.i32();
  // What a peer says is escaped before it is logged or kept (issue 16, item 5).
  std::string host = util::printable(in.str(255));
  std::string its_job = in.str(kMaxJobLength);
  auto ns_bytes = in.bytes(32);
  auto mac = in.bytes(32);
  if (in.failed() || !in.at_end()) return refuse("malformed auth frame");
  Nonce ns;
  std::copy(ns_bytes.begin(), ns_bytes.end(), ns.begin());
  if (!macs_equal(mac, slave_proof(secret, nm, ns, rank, size, its_job)))
    return refuse("wrong job secret (claimed rank " + std::to_string(rank) + " on " + host + ")");
  // Nodes of another job that shares the secret (a secret file) are turned away here, not
  // when the job fails later (issue 16, item 3).
  if (its_job != job)
    return refuse("it belongs to another job (" + util::printable(its_job) + "; this job: " + util::printable(job) +
                  ")");
  if (size != job_size)
    return refuse("job size mismatch: it says " + std::to_string(size) + ", the master " +
                  std::to_string(job_size));
  if (rank < 1 || rank >= job_size) return refuse("bad rank " + std::to_string(rank));
  if (std::string why = may_join(rank); !why.empty()) return refuse(why);
  Mac proof = master_proof(secret, nm, ns, rank, job);
  iovec v = iov_of(proof.data(), proof.size());
  r = write_frame(fd, FrameType::auth_ok, {&v, 1}, left(deadline));
  if (!r.ok()) {
    CAPE_LOG_AT(warn, "net") << "rank " << rank << " from " << addr
                             << " dropped after authentication: " << r.describe();
    return std::nullopt;
  }
  return Joiner{rank, pid, host};
}

void join_master(int fd, const std::string& addr, const Secret& secret, const SlaveId& me,
                 std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Frame f;
  IoResult r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  if (!r.ok()) throw UserError("no handshake from the master at " + addr + ": " + r.describe());
  if (f.type != FrameType::challenge || f.payload.size() != 32)
    throw UserError("the peer at " + addr + " does not speak the cape protocol");
  Nonce nm;
  std::copy(f.payload.begin(), f.payload.end(), nm.begin());
  Nonce ns = random_nonce();
  PayloadWriter w;
  w.i32(me.rank);
  w.i32(me.size);
  w.i32(::getpid());
  w.str(me.label.substr(0, 255));
  std::string job = me.job.substr(0, kMaxJobLength);
  w.str(job);
  w.bytes(ns);
  Mac mac = slave_proof(secret, nm, ns, me.rank, me.size, job);
  w.bytes(mac);
  iovec v = iov_of(w.buffer().data(), w.buffer().size());
  r = write_frame(fd, FrameType::auth, {&v, 1}, left(deadline));
  if (!r.ok()) throw UserError("handshake with the master at " + addr + ": " + r.describe());
  r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  if (!r.ok()) throw UserError("handshake with the master at " + addr + ": " + r.describe());
  if (f.type == FrameType::refused) {
    PayloadReader in(f.payload);
    throw UserError("the master at " + addr + " refused rank " + std::to_string(me.rank) + ": " +
                    util::printable(in.str(4096)));
  }
  if (f.type != FrameType::auth_ok || !macs_equal(f.payload, master_proof(secret, nm, ns, me.rank, job)))
    throw UserError("the peer at " + addr + " does not hold the job secret");
}

}  // namespace cape::net
