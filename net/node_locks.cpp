// The lock service's frames (net/lock_service.h, docs/critical.md). The master serves the
// slaves' requests and releases on their connections' reader threads, and its own
// program's in-process; a slave asks with a frame and waits for its grant in the mailboxes,
// under the name "lock:NAME" (checkpoint names of translated code never hold a ':').
#include <chrono>
#include <stdexcept>

#include "ckpt/format.h"
#include "net/node.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace cape::net {

namespace {
std::string grant_mailbox(const std::string& name) { return "lock:" + name; }
// omp_test_lock's answer when the lock is busy: no stamp.
ckpt::Checkpoint busy(const std::string& name) {
  ckpt::Checkpoint c;
  c.name = name;
  c.timestamp = 0;
  return c;
}
}  // namespace

void Node::send_lock_frame(Peer& p, FrameType type, const std::string& head, const ckpt::Checkpoint& ck) {
  PayloadWriter w;
  w.str(head);
  ckpt::SerializedParts body = ckpt::serialize_parts(ck, {.checksum = false});
  iovec v[4] = {iov_of(w.buffer().data(), w.buffer().size()), iov_of(body.prefix.data(), body.prefix.size()),
                iov_of(body.data.data(), body.data.size()), iov_of(body.suffix.data(), body.suffix.size())};
  IoResult r = p.send(type, v, opt_.timeout);
  if (r.ok()) return;
  std::string msg;
  {
    std::lock_guard lk(mu_);
    msg = std::string("sending a ") + to_string(type) + " frame to " + p.who() + ": " + r.describe() + " " +
          region_of(p);
  }
  fail(msg, opt_.rank == 0 || opt_.rank == 1);
  throw_failure();
}

void Node::grant_to(int rank, const std::string& name) {
  if (rank == 0) {  // the master's own program waits in lock_acquire
    cv_.notify_all();
    return;
  }
  ckpt::Checkpoint g;
  std::string error;
  {
    std::lock_guard lk(mu_);
    try {
      g = locks_.grant(name, rank);
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  }
  if (!error.empty()) {
    fail(error, true);
    throw_failure();
  }
  CAPE_LOG_AT(debug, "locks") << "grant '" << name << "' to node " << rank << ": stamp " << g.timestamp << ", "
                              << g.runs.size() << " runs";
  send_lock_frame(*peers_[rank], FrameType::lock_grant, grant_mailbox(name), g);
}

ckpt::Checkpoint Node::lock_acquire(const std::string& name, uint64_t region, bool wait, int64_t ticket,
                                    const std::function<void()>& meanwhile) {
  if (opt_.rank != 0) {
    PayloadWriter w;
    w.str(name);
    w.u64(region);
    w.u8(wait ? 0 : 1);
    w.u64(static_cast<uint64_t>(ticket));
    ask_master(FrameType::lock_request, w.buffer(), "lock '" + name + "'");
    if (meanwhile) meanwhile();
    return receive(grant_mailbox(name));
  }
  if (meanwhile) meanwhile();
  std::unique_lock lk(mu_);
  if (failure_) throw UserError(*failure_, failure_exit_code_);
  try {
    if (!locks_.request(name, 0, region, wait, ticket) && !wait) return busy(name);
  } catch (const std::logic_error& e) {
    throw UserError(e.what());
  }
  while (!locks_.held_by(name, 0)) {
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (stopping_) throw UserError("waiting for lock '" + name + "': the node is shutting down");
    cv_.wait(lk);
  }
  try {
    return locks_.grant(name, 0);
  } catch (const std::logic_error& e) {
    lk.unlock();
    fail(e.what(), true);
    throw_failure();
  }
}

void Node::lock_release(const std::string& name, const ckpt::Checkpoint& writes) {
  if (opt_.rank != 0) {
    // A small release goes out from the heartbeat thread, while the program runs on: its
    // send (the loopback delivery, ~17 us) left the critical path. The connection keeps the
    // order: every later frame to the master (the next request, the region's part) sends
    // the waiting ones first (Peer::later).
    if (writes.memory_bytes() > kReleaseLaterBytes)
      return send_lock_frame(*peers_[0], FrameType::lock_release, name, writes);
    PayloadWriter w;
    w.str(name);
    ckpt::SerializedParts body = ckpt::serialize_parts(writes, {.checksum = false});
    w.bytes(body.prefix);
    w.bytes(body.data);
    w.bytes(body.suffix);
    peers_[0]->later(FrameType::lock_release, std::move(w.buffer()));
    {
      std::lock_guard lk(mu_);
      flush_soon_ = true;
    }
    heartbeat_cv_.notify_one();
    return;
  }
  int next = -1;
  {
    std::lock_guard lk(mu_);
    try {
      next = locks_.release(name, 0, writes);
    } catch (const std::logic_error& e) {
      throw UserError(e.what());
    }
  }
  if (next > 0) grant_to(next, name);
}

void Node::on_lock_frame(Peer& p, Frame& f) {
  PayloadReader in(f.payload);
  std::string name = in.str(ckpt::kMaxNameLength);
  bool from_master = p.rank == 0;
  bool wrong_way = (f.type == FrameType::lock_grant) != from_master;
  uint64_t region = f.type == FrameType::lock_request ? in.u64() : 0;
  bool wait = f.type == FrameType::lock_request ? in.u8() == 0 : true;
  int64_t ticket = f.type == FrameType::lock_request ? static_cast<int64_t>(in.u64()) : -1;
  if (in.failed() || wrong_way) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " sent a " + (wrong_way ? "misdirected " : "malformed ") + to_string(f.type) + " frame";
    }
    fail(msg, true);
    return;
  }
  size_t offset = f.payload.size() - in.rest().size();
  try {
    switch (f.type) {
      case FrameType::lock_grant: {
        {
          std::lock_guard lk(mu_);
          mail_.put(name, Mail{p.rank, std::move(f.payload), offset});
        }
        cv_.notify_all();
        return;
      }
      case FrameType::lock_request: {
        bool now;
        {
          std::lock_guard lk(mu_);
          now = locks_.request(name, p.rank, region, wait, ticket);
        }
        CAPE_LOG_AT(debug, "locks") << "node " << p.rank << " asks for '" << util::printable(name) << "'"
                                    << (now ? "" : wait ? ": in line" : ": busy");
        if (now) grant_to(p.rank, name);
        if (!now && !wait) send_lock_frame(p, FrameType::lock_grant, grant_mailbox(name), busy(name));
        return;
      }
      case FrameType::lock_release: {
        ckpt::Checkpoint writes = open_mail(Mail{p.rank, std::move(f.payload), offset}, name);
        int next;
        {
          std::lock_guard lk(mu_);
          next = locks_.release(name, p.rank, writes);
        }
        if (next >= 0) grant_to(next, name);
        return;
      }
      default:
        return;
    }
  } catch (const std::logic_error& e) {
    fail(e.what(), true);
  } catch (const ckpt::Error& e) {
    std::string msg;
    {
      std::lock_guard lk(mu_);
      msg = p.who() + " released lock '" + util::printable(name) + "' with an invalid checkpoint: " + e.what();
    }
    fail(msg, true);
  } catch (const UserError&) {
    // grant_to's send failed: the job has failed already.
  }
}

}  // namespace cape::net
