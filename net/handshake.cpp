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

constexpr size_t kChallengeSize = 32 + 32 + 1;  // nonce, job nonce, flags (bit 0: encrypt)

std::vector<uint8_t> context_of(const JobSession& js) {
  std::vector<uint8_t> c(js.nonce.begin(), js.nonce.end());
  c.push_back(js.encrypt ? 1 : 0);
  return c;
}

// Both ends derive the same keys; `master` says which end this is.
FrameKeys keys_for(const Secret& secret, const JobSession& js, const Nonce& nm, const Nonce& ns, int rank,
                   bool master) {
  FrameKey to_slaves = derive_key(secret, "master->slaves", js.nonce);
  std::vector<uint8_t> m(js.nonce.begin(), js.nonce.end());
  m.insert(m.end(), nm.begin(), nm.end());
  m.insert(m.end(), ns.begin(), ns.end());
  for (int i = 0; i < 4; ++i) m.push_back(static_cast<uint8_t>(static_cast<uint32_t>(rank) >> (8 * i)));
  FrameKey to_master = derive_key(secret, "slave->master", m);
  FrameKeys k;
  k.send = master ? to_slaves : to_master;
  k.recv = master ? to_master : to_slaves;
  k.send_stream = k.recv_stream = static_cast<uint32_t>(rank);
  k.encrypt = js.encrypt;
  return k;
}

// What is left of the handshake's time (at least 1 ms, so that a write still tries once).
std::chrono::milliseconds left(Clock::time_point deadline) {
  auto l = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(l, std::chrono::milliseconds(1));
}
}  // namespace

std::optional<Joiner> accept_slave(int fd, const std::string& addr, const Secret& secret, int job_size,
                                   std::chrono::milliseconds timeout,
                                   const std::function<std::string(int rank)>& may_join, const std::string& job,
                                   const JobSession& session, const std::function<bool()>& job_ending) {
  // One deadline for the whole handshake: a peer that sends a byte now and then cannot hold
  // it longer than `timeout` (issue 16, item 1).
  const auto deadline = Clock::now() + timeout;
  Nonce nm = random_nonce();
  const std::vector<uint8_t> context = context_of(session);
  auto dropped = [&](const std::string& what) {
    if (job_ending && job_ending())
      CAPE_LOG_AT(info, "net") << what;
    else
      CAPE_LOG_AT(warn, "net") << what;
  };
  {
    PayloadWriter w;
    w.bytes(nm);
    w.bytes(context);
    iovec v = iov_of(w.buffer().data(), w.buffer().size());
    IoResult r = write_frame(fd, FrameType::challenge, {&v, 1}, left(deadline));
    if (!r.ok()) {
      dropped("connection from " + addr + " dropped during the handshake: " + r.describe());
      return std::nullopt;
    }
  }
  Frame f;
  IoResult r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  auto refuse = [&](const std::string& why) -> std::optional<Joiner> {
    dropped("refused a connection from " + addr + ": " + why);
    PayloadWriter w;
    w.str(why);
    iovec v = iov_of(w.buffer().data(), w.buffer().size());
    (void)write_frame(fd, FrameType::refused, {&v, 1}, std::chrono::milliseconds(200));
    return std::nullopt;
  };
  if (r.status == IoStatus::timeout) {
    // A slave slow to answer (a loaded machine) is not refused: it sees the connection close
    // and tries again (join_master's HandshakeLost); a refusal would end its join for good.
    dropped("connection from " + addr + " dropped: no authentication within the handshake's " +
            std::to_string(timeout.count()) + " ms");
    return std::nullopt;
  }
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
  if (!macs_equal(mac, slave_proof(secret, nm, ns, rank, size, its_job, context)))
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
  Mac proof = master_proof(secret, nm, ns, rank, job, context);
  iovec v = iov_of(proof.data(), proof.size());
  r = write_frame(fd, FrameType::auth_ok, {&v, 1}, left(deadline));
  if (!r.ok()) {
    dropped("rank " + std::to_string(rank) + " from " + addr + " dropped after authentication: " + r.describe());
    return std::nullopt;
  }
  return Joiner{rank, pid, host, keys_for(secret, session, nm, ns, rank, true)};
}

FrameKeys join_master(int fd, const std::string& addr, const Secret& secret, const SlaveId& me,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Frame f;
  IoResult r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  if (!r.ok() && r.status != IoStatus::bad_frame)
    throw HandshakeLost("no handshake from the master at " + addr + ": " + r.describe());
  if (!r.ok()) throw UserError("no handshake from the master at " + addr + ": " + r.describe());
  if (f.type != FrameType::challenge || f.payload.size() != kChallengeSize || f.payload[64] > 1)
    throw UserError("the peer at " + addr + " does not speak the cape protocol");
  Nonce nm;
  std::copy(f.payload.begin(), f.payload.begin() + 32, nm.begin());
  JobSession session;
  std::copy(f.payload.begin() + 32, f.payload.begin() + 64, session.nonce.begin());
  session.encrypt = f.payload[64] == 1;
  const std::vector<uint8_t> context = context_of(session);
  Nonce ns = random_nonce();
  PayloadWriter w;
  w.i32(me.rank);
  w.i32(me.size);
  w.i32(::getpid());
  w.str(me.label.substr(0, 255));
  std::string job = me.job.substr(0, kMaxJobLength);
  w.str(job);
  w.bytes(ns);
  Mac mac = slave_proof(secret, nm, ns, me.rank, me.size, job, context);
  w.bytes(mac);
  iovec v = iov_of(w.buffer().data(), w.buffer().size());
  r = write_frame(fd, FrameType::auth, {&v, 1}, left(deadline));
  if (!r.ok()) throw HandshakeLost("handshake with the master at " + addr + ": " + r.describe());
  r = read_frame(fd, f, kHandshakeMaxPayload, timeout, deadline);
  if (!r.ok() && r.status != IoStatus::bad_frame)
    throw HandshakeLost("handshake with the master at " + addr + ": " + r.describe());
  if (!r.ok()) throw UserError("handshake with the master at " + addr + ": " + r.describe());
  if (f.type == FrameType::refused) {
    PayloadReader in(f.payload);
    throw UserError("the master at " + addr + " refused rank " + std::to_string(me.rank) + ": " +
                    util::printable(in.str(4096)));
  }
  if (f.type != FrameType::auth_ok || !macs_equal(f.payload, master_proof(secret, nm, ns, me.rank, job, context)))
    throw UserError("the peer at " + addr + " does not hold the job secret");
  return keys_for(secret, session, nm, ns, me.rank, false);
}

}  // namespace cape::net
