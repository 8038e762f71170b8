// The lock service's frames (net/lock_service.h, docs/critical.md). The master serves the
// slaves' requests and releases on their connections' reader threads, and its own
// program's in-process; a slave asks with a frame and waits for its grant in the mailboxes,
// under the name "lock:NAME" (checkpoint names of translated code never hold a ':').
#include <chrono>
#include <optional>
#include <stdexcept>

#include "ckpt/format.h"
#include "ckpt/overlay.h"
#include "net/node.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

namespace cape::net {

namespace {
std::string grant_mailbox(const std::string& name) { return "lock:" + name; }
// A grant that is a lease says so in its head (the reader files it as grant_mailbox's).
std::string lease_head(const std::string& name) { return "lease:" + name; }
// A lease kept into window `region` (LockService::release_renew): the holder's release and
// the master's answer (a grant, stamp 1) are headed so.
std::string renew_head(uint64_t region, const std::string& name) { return "renew:" + std::to_string(region) + ":" + name; }
bool parse_renew(const std::string& head, uint64_t* region, std::string* name) {
  if (!head.starts_with("renew:")) return false;
  size_t colon = head.find(':', 6);
  if (colon == std::string::npos || colon == 6) return false;
  try {
    *region = std::stoull(head.substr(6, colon - 6));
  } catch (const std::exception&) {
    return false;
  }
  *name = head.substr(colon + 1);
  return true;
}
// omp_test_lock's answer when the lock is busy: no stamp.
ckpt::Checkpoint busy(const std::string& name) {
  ckpt::Checkpoint c;
  c.name = name;
  c.timestamp = 0;
  return c;
}
}  // namespace

bool Node::send_lock_frame(Peer& p, FrameType type, const std::string& head, const ckpt::Checkpoint& ck, bool quiet) {
  PayloadWriter w;
  w.str(head);
  ckpt::SerializedParts body = ckpt::serialize_parts(ck, {.checksum = false});
  iovec v[4] = {iov_of(w.buffer().data(), w.buffer().size()), iov_of(body.prefix.data(), body.prefix.size()),
                iov_of(body.data.data(), body.data.size()), iov_of(body.suffix.data(), body.suffix.size())};
  IoResult r = p.send(type, v, opt_.timeout);
  if (r.ok()) return true;
  if (quiet) return false;
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
    wake_waiters();
    return;
  }
  ckpt::Checkpoint g;
  bool lease = false;
  std::string error;
  {
    std::lock_guard lk(mu_);
    try {
      g = locks_.grant(name, rank);
      lease = locks_.leased_by(name, rank);
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  }
  if (!error.empty()) {
    fail(error, true);
    throw_failure();
  }
  CAPE_LOG_AT(debug, "locks") << (lease ? "lease '" : "grant '") << name << "' to node " << rank << ": stamp " << g.timestamp << ", "
                              << g.runs.size() << " runs";
  send_lock_frame(*peers_[rank], FrameType::lock_grant, lease ? lease_head(name) : grant_mailbox(name), g);
}

ckpt::Checkpoint Node::lock_acquire(const std::string& name, uint64_t region, bool wait, int64_t ticket,
                                    const std::function<void()>& meanwhile) {
  if (opt_.rank != 0) {
    // A lease this node holds (docs/critical.md, "Lock leases"): nobody asked for the lock
    // since this node's last exit, and nobody wrote under it: re-entered with its stamp, no frame.
    const bool lease = opt_.lock_lease && ticket < 0;
    std::optional<ckpt::Checkpoint> leased;
    if (lease) {
      std::unique_lock lk(mu_);
      // A lease the reader is giving back: its release must reach the master before this
      // node's next request (else the master sees a holder asking for its own lock).
      cv_.wait(lk, [&] {
        auto r = leases_.find(name);
        return r == leases_.end() || !r->second.returning || failure_;
      });
      if (failure_) throw UserError(*failure_, failure_exit_code_);
      auto it = leases_.find(name);
      if (it != leases_.end() && it->second.region != region) {  // ended with its region
        leases_.erase(it);
        it = leases_.end();
      }
      if (it != leases_.end()) {
        if (it->second.inside || it->second.revoked)
          throw UserError("lock '" + name + "' entered again while this node is inside it (node-side lease state)");
        it->second.inside = true;  // a revoke from now on waits for the exit
        it->second.used = true;
        lease_entries_++;
        leased.emplace();
        leased->name = name;
        leased->timestamp = it->second.stamp;
      } else {
        lease_asked_[name] = false;
      }
    }
    if (leased) {
      if (meanwhile) meanwhile();
      return std::move(*leased);
    }
    PayloadWriter w;
    w.str(name);
    w.u64(region);
    w.u8(static_cast<uint8_t>((wait ? 0 : 1) | (lease ? 2 : 0)));
    w.u64(static_cast<uint64_t>(ticket));
    ask_master(FrameType::lock_request, w.buffer(), "lock '" + name + "'");
    CAPE_LOG_AT(debug, "locks") << "asked the master for '" << util::printable(name) << "'";
    if (meanwhile) meanwhile();
    // (The spin starts after `meanwhile`: a capture that outlasts it sleeps as before.)
    const int64_t spin = opt_.grant_spin.count() > 0 ? now_ns() + opt_.grant_spin.count() * 1000 : 0;
    read_spinning_.store(false);
    ckpt::Checkpoint g = receive_until(grant_mailbox(name), spin);
    const bool spun = read_spinning_.load();  // (not when no CPU was to spare: util/spin.h)
    CAPE_LOG_AT(debug, "locks") << "got '" << util::printable(name) << "': stamp " << g.timestamp;
    std::lock_guard lk(mu_);
    if (spin) (spun ? grants_spun_ : grants_slept_)++;
    auto it = lease ? leases_.find(name) : leases_.end();  // recorded by the reader with the grant
    if (it != leases_.end()) {
      if (g.timestamp == 0) {
        leases_.erase(it);  // omp_test_lock: busy, nothing held
      } else {
        it->second.region = region;
        it->second.stamp = g.timestamp;
        lease_grants_++;
      }
    } else if (g.timestamp != 0 && (lease || ticket >= 0)) {
      // A plain grant although the node asked for a lease: the master saw others in line or
      // the lock contended in this region. An ordered ticket's successor asks right after it.
      // Either way the release is probably awaited: it goes out at once (lock_release).
      awaited_.insert(name);
    }
    return g;
  }
  if (meanwhile) meanwhile();
  std::unique_lock lk(mu_);
  if (failure_) throw UserError(*failure_, failure_exit_code_);
  // The master's own leases (session 10): only for trap-free re-entry (the monitor set the
  // hook), which is all they save here (no round trip). Re-entered as a slave's: no service.
  const bool own_lease = opt_.lock_lease && ticket < 0 && lease_hook_;
  if (own_lease) {
    auto it = leases_.find(name);
    if (it != leases_.end() && it->second.region != region) {  // ended with its window
      leases_.erase(it);
      it = leases_.end();
    }
    if (it != leases_.end()) {
      if (it->second.inside || it->second.revoked)
        throw UserError("lock '" + name + "' entered again while this node is inside it (node-side lease state)");
      it->second.inside = true;
      it->second.used = true;
      lease_entries_++;
      ckpt::Checkpoint g;
      g.name = name;
      g.timestamp = it->second.stamp;
      return g;
    }
  }
  int holder = -1;
  try {
    const bool now = locks_.request(name, 0, region, wait, ticket, own_lease, &holder);
    if (holder > 0) {  // (also a renewal cancelled: LockService::request)
      lk.unlock();
      revoke(holder, name);
      lk.lock();
    }
    if (!now && !wait) return busy(name);
  } catch (const std::logic_error& e) {
    throw UserError(e.what());
  }
  while (!locks_.held_by(name, 0)) {
    if (failure_) throw UserError(*failure_, failure_exit_code_);
    if (stopping_) throw UserError("waiting for lock '" + name + "': the node is shutting down");
    cv_.wait(lk);
  }
  try {
    ckpt::Checkpoint g = locks_.grant(name, 0);
    // A lease nobody asked for since it was granted (a slave's request may have come between
    // a grant from the line and this thread's wake-up: then a plain grant, released at the exit).
    if (own_lease && locks_.leased_by(name, 0) && !locks_.asked_back(name)) {
      Lease& l = leases_[name];
      l = Lease{};
      l.region = region;
      l.stamp = g.timestamp;
      lease_grants_++;
    }
    return g;
  } catch (const std::logic_error& e) {
    lk.unlock();
    fail(e.what(), true);
    throw_failure();
  }
}

// A slave asks for a lock the master's own program keeps as a lease (mu_ not held): as a
// slave's reader does at a lock_revoke, the program's word closes first; outside a body with
// nothing logged, the lease goes back now (released into the service, in-process); else the
// monitor releases it, at the body's exit or at the program's next runtime call.
void Node::revoke_own(const std::string& name) {
  int next = -1;
  const char* what = "given back already";
  {
    std::lock_guard lk(mu_);
    lease_revokes_++;
    auto it = leases_.find(name);
    if (it == leases_.end() || !locks_.held_by(name, 0)) {
      // (none: a grant from the line not taken up yet, released at its exit as a plain one)
    } else {
      const int word = lease_hook_ ? lease_hook_(name) : kLeaseNone;
      if (it->second.inside || word == kLeaseLogged || word == kLeaseInside) {
        it->second.revoked = true;
        what = it->second.inside ? "at the body's exit"
               : word == kLeaseInside ? "at the exit of a body entered without a trap"
                                      : "at the program's next runtime call (bodies entered without a trap)";
      } else {
        ckpt::Checkpoint back = std::move(it->second.writes);
        back.name = name;
        back.timestamp = it->second.stamp;
        leases_.erase(it);
        try {
          next = locks_.release(name, 0, back);
        } catch (const std::logic_error& e) {
          what = e.what();
        }
        what = "given back";
      }
    }
  }
  CAPE_LOG_AT(debug, "locks") << "a slave asks for '" << util::printable(name) << "', the master's lease: " << what;
  if (next > 0) grant_to(next, name);
}

void Node::revoke(int rank, const std::string& name) {
  CAPE_LOG_AT(debug, "locks") << "ask node " << rank << " to give back its lease of '" << util::printable(name) << "'";
  PayloadWriter w;
  w.str(name);
  IoResult r = peers_[rank]->send(FrameType::lock_revoke, {std::array<iovec, 1>{iov_of(w.buffer().data(), w.buffer().size())}},
                                  opt_.timeout);
  if (r.ok()) return;
  std::string msg;
  {
    std::lock_guard lk(mu_);
    // A renewal cancelled (LockService::request): nobody waits for that node's answer, and a
    // node that has ended its program cannot use it.
    if (!locks_.held_by(name, rank)) return;
    // The holder closed its connection: a slave gives its leases back before its part
    // (return_leases) and may end its program while others are still in the window, so its
    // release may still be unread on that connection, behind the frame read now (CI's
    // critical.trackers failed so, 1 run in ~250 of crit_list under load). Whoever reads
    // that connection settles it: the release moves the lock on; its end with the lock still
    // held fails the job (end_of). Only a connection whose end was read already fails here.
    if (r.status == IoStatus::eof && !peers_[rank]->closed) {
      CAPE_LOG_AT(info, "locks") << "asking " << peers_[rank]->who() << " for lock '" << util::printable(name)
                                 << "' back: its connection is closed; its release may still be on the way";
      return;
    }
    msg = "sending a lock_revoke frame to " + peers_[rank]->who() + ": " + r.describe();
  }
  fail(msg, true);
}

// A lease goes back with the writes its bodies made (laid over each other in their order,
// under the lease's stamp): a plain lock_release, sent by the reader thread (asked back
// outside a body) or the monitor thread (the window's end). Peer::send sends the frames
// waiting in later() first, so the connection's order holds.
void Node::give_back(const std::string& name, const ckpt::Checkpoint& writes) {
  send_lock_frame(*peers_[0], FrameType::lock_release, name, writes);
}

// A slave's window ends (its part goes to the master next): every lease goes back first, on
// the same connection, so that the master has them before the part. The leases end with the
// window anyway (LockService::new_region), but this node may end its program right after
// and stop answering revokes, while another node still in the window waits for one.
void Node::return_leases() {
  std::vector<std::pair<std::string, ckpt::Checkpoint>> back;  // (a renewal's head for the name)
  {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] {  // a lease the reader is giving back goes first
      for (auto& [name, l] : leases_)
        if (l.returning && !failure_) return false;
      return true;
    });
    for (auto it = leases_.begin(); it != leases_.end();)
      if (!it->second.inside) {
        // (The monitor read every body's targets at this runtime call, before its part.)
        if (lease_hook_ && lease_hook_(it->first) >= kLeaseLogged)
          throw std::logic_error("lock '" + it->first + "': a lease given back with bodies' writes not read yet");
        // Used in this window and nobody asked for it: asked to be kept into the next one
        // (CAPE_LOCK_RENEW=0: never), where the first entry then needs no message either.
        const Lease& l = it->second;
        const bool renew = l.used && !l.revoked && !l.returning && opt_.lock_renew;
        back.emplace_back(renew ? renew_head(l.region + 1, it->first) : it->first, std::move(it->second.writes));
        it = leases_.erase(it);
      } else {
        ++it;
      }
  }
  for (const auto& [name, writes] : back) give_back(name, writes);
}

void Node::lock_release(const std::string& name, const ckpt::Checkpoint& writes) {
  if (opt_.rank != 0) {
    // Under a lease nobody asked back, the writes stay on the node, laid over the lease's
    // earlier bodies' (the master needs them only when the lock moves on: give_back). No
    // frame at all. Asked back meanwhile: they all go now, as a plain release.
    std::optional<ckpt::Checkpoint> out;
    bool awaited = false;  // another node probably waits for this release
    {
      std::lock_guard lk(mu_);
      auto it = leases_.find(name);
      if (it == leases_.end()) {
        out = writes;
        awaited = awaited_.erase(name) > 0;
      } else {
        Lease& l = it->second;
        if (!writes.runs.empty() || !writes.mappings.empty() || !l.have_writes)
          l.writes = l.have_writes ? ckpt::overlay(l.writes, writes) : writes;
        l.writes.timestamp = writes.timestamp;
        l.writes.name = name;
        l.have_writes = true;
        l.inside = false;
        if (l.revoked) {  // asked back: the asker waits for it
          out = std::move(l.writes);
          leases_.erase(it);
          awaited = true;
        }
      }
      if (out && awaited && opt_.lock_send_now)
        releases_now_++;
      else if (out && out->memory_bytes() <= kReleaseLaterBytes)
        releases_later_++;
    }
    if (!out) return;
    // Awaited (session 12): sent now, on this thread. Left to the heartbeat thread, that
    // thread's wake-up (tens of us on a loaded VM, milliseconds at worst) was on the waiter's
    // path: contended entries cost ~1.3 ms each at load 18 (docs/critical.md, "Session 12").
    if (awaited && opt_.lock_send_now) {
      send_lock_frame(*peers_[0], FrameType::lock_release, name, *out);
      return;
    }
    // A small release goes out from the heartbeat thread, while the program runs on: its
    // send (the loopback delivery, ~17 us) left the critical path. The connection keeps the
    // order: every later frame to the master (the next request, the region's part) sends
    // the waiting ones first (Peer::later).
    if (out->memory_bytes() > kReleaseLaterBytes) {
      send_lock_frame(*peers_[0], FrameType::lock_release, name, *out);
      return;
    }
    PayloadWriter w;
    w.str(name);
    ckpt::SerializedParts body = ckpt::serialize_parts(*out, {.checksum = false});
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
      auto it = leases_.find(name);
      if (it == leases_.end()) {
        next = locks_.release(name, 0, writes);
      } else {  // the master's own lease: kept, with its writes, until a slave asks for it
        Lease& l = it->second;
        if (!writes.runs.empty() || !writes.mappings.empty() || !l.have_writes)
          l.writes = l.have_writes ? ckpt::overlay(l.writes, writes) : writes;
        l.writes.timestamp = l.stamp;
        l.writes.name = name;
        l.have_writes = true;
        l.inside = false;
        if (!l.revoked) return;
        ckpt::Checkpoint back = std::move(l.writes);
        leases_.erase(it);
        next = locks_.release(name, 0, back);
      }
    } catch (const std::logic_error& e) {
      throw UserError(e.what());
    }
  }
  if (next > 0) grant_to(next, name);
}

uint64_t Node::lock_lease_stamp(const std::string& name, uint64_t region) {
  std::lock_guard lk(mu_);
  auto it = leases_.find(name);
  if (it == leases_.end() || it->second.revoked || it->second.returning || it->second.inside ||
      it->second.region != region)
    return 0;
  return it->second.stamp;
}

bool Node::lock_lease_hand_over(const std::string& name, uint64_t region, const std::function<bool()>& to_slot) {
  std::lock_guard lk(mu_);
  auto it = leases_.find(name);
  if (it == leases_.end() || it->second.region != region || !it->second.inside || it->second.revoked ||
      it->second.returning)
    return false;
  if (!to_slot()) return false;
  it->second.inside = false;  // a revoke from now on closes the word (its exit then traps)
  it->second.used = true;
  return true;
}

bool Node::lock_lease_writes(const std::string& name, const ckpt::Checkpoint& writes, const std::function<void()>& kept) {
  {
    std::lock_guard lk(mu_);
    auto it = leases_.find(name);
    if (it == leases_.end() || it->second.returning) return false;  // went with its release
    if (!it->second.revoked) {
      Lease& l = it->second;
      l.used = true;
      l.writes = l.have_writes ? ckpt::overlay(l.writes, writes) : writes;
      l.writes.timestamp = writes.timestamp;
      l.writes.name = name;
      l.have_writes = true;
      if (kept) kept();
      return true;
    }
  }
  lock_release(name, writes);  // asked back: all of them go now
  return false;
}

void Node::on_lock_frame(Peer& p, Frame& f) {
  PayloadReader in(f.payload);
  std::string name = in.str(ckpt::kMaxNameLength);
  bool from_master = p.rank == 0;
  bool to_slave = f.type == FrameType::lock_grant || f.type == FrameType::lock_revoke;
  bool wrong_way = to_slave != from_master;
  uint64_t region = f.type == FrameType::lock_request ? in.u64() : 0;
  uint8_t flags = f.type == FrameType::lock_request ? in.u8() : 0;
  bool wait = (flags & 1) == 0, lease = (flags & 2) != 0;
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
  // (The master's waiting monitor polls on for a while after this: Node::wait_for.)
  if (opt_.wait_spin.count() > 0 && (f.type == FrameType::lock_request || f.type == FrameType::lock_release)) {
    lock_frame_ns_.store(now_ns());
    slave_locks_.store(true);
  }
  try {
    switch (f.type) {
      case FrameType::lock_grant: {
        uint64_t window = 0;
        std::string renewed;
        if (parse_renew(name, &window, &renewed)) {  // a lease kept into `window`: not asked for
          std::lock_guard lk(mu_);
          Lease& l = leases_[renewed];
          l = Lease{};
          l.region = window;
          l.stamp = 1;
          l.inside = false;
          l.used = false;
          lease_renewals_++;
          return;
        }
        {
          std::lock_guard lk(mu_);
          const bool lease = name.starts_with("lease:");
          std::string lock = name.substr(name.find(':') + 1);
          auto asked = lease_asked_.find(lock);
          if (asked != lease_asked_.end()) {
            if (lease) leases_[lock].revoked = asked->second;  // inside; the monitor fills in the rest
            lease_asked_.erase(asked);
          }
          mail_.put(grant_mailbox(lock), Mail{p.rank, std::move(f.payload), offset});
        }
        wake_waiters();
        return;
      }
      case FrameType::lock_revoke: {
        std::optional<ckpt::Checkpoint> back;
        const char* what = "given back already";
        {
          std::lock_guard lk(mu_);
          lease_revokes_++;
          auto it = leases_.find(name);
          auto asked = lease_asked_.find(name);
          // The program's word for it (trap-free re-entry) is closed first: a body that runs
          // or targets logged since the monitor's last look make the monitor send it.
          const int word = it != leases_.end() && lease_hook_ ? lease_hook_(name) : kLeaseNone;
          if (it != leases_.end() && it->second.inside) {
            it->second.revoked = true;  // its exit releases it
            what = "at the body's exit";
          } else if (word == kLeaseLogged || word == kLeaseInside) {
            it->second.revoked = true;
            what = word == kLeaseInside ? "at the exit of a body entered without a trap"
                                        : "at the program's next runtime call (bodies entered without a trap)";
          } else if (it != leases_.end()) {
            it->second.returning = true;  // erased once its release is sent
            back = std::move(it->second.writes);
            what = "given back";
          } else if (asked != lease_asked_.end()) {
            // The grant is still on its way: the master sent it and this revoke from two
            // reader threads (the grant from the holder's, the revoke from the asker's), so
            // the revoke may come first. The lease is recorded as asked back: its exit releases it.
            asked->second = true;
            what = "at the body's exit (the grant still on its way)";
          }
          // (else: given back already, by return_leases; its release is on the way)
        }
        CAPE_LOG_AT(debug, "locks") << "the master asks for '" << util::printable(name) << "' back: " << what;
        if (back) {
          struct Returned {  // the lease is gone once its release is on its way (or failed)
            Node& n;
            const std::string& name;
            ~Returned() {
              {
                std::lock_guard lk(n.mu_);
                auto it = n.leases_.find(name);
                if (it != n.leases_.end() && it->second.returning) n.leases_.erase(it);
              }
              n.wake_waiters();
            }
          } returned{*this, name};
          back->name = name;
          give_back(name, *back);
        }
        return;
      }
      case FrameType::lock_request: {
        bool now;
        int holder = -1;
        {
          std::lock_guard lk(mu_);
          now = locks_.request(name, p.rank, region, wait, ticket, lease, &holder);
        }
        CAPE_LOG_AT(debug, "locks") << "node " << p.rank << " asks for '" << util::printable(name) << "'"
                                    << (now ? "" : wait ? ": in line" : ": busy");
        // Granted at once while a holder is asked back: a renewal for the holder's next window
        // cancelled (LockService::request), whose answer nobody waits for. The grant goes
        // first: the revoke's send (~15-20 us on loopback) was on the asker's way (the bench's
        // `taken` line: the holder had given the lease back with its part, renewed).
        if (now && holder != p.rank) grant_to(p.rank, name);
        if (holder > 0) revoke(holder, name);
        if (holder == 0) revoke_own(name);
        if (now && holder == p.rank) grant_to(p.rank, name);
        if (!now && !wait) send_lock_frame(p, FrameType::lock_grant, grant_mailbox(name), busy(name));
        return;
      }
      case FrameType::lock_release: {
        uint64_t next_window = 0;
        std::string lock;
        const bool renew = parse_renew(name, &next_window, &lock);
        if (renew) name = lock;
        ckpt::Checkpoint writes = open_mail(Mail{p.rank, std::move(f.payload), offset}, name);
        int next;
        bool kept = false;
        uint64_t token = 0;
        {
          std::lock_guard lk(mu_);
          if (renew)
            kept = locks_.release_renew(name, p.rank, writes, next_window, &next, &token);
          else
            next = locks_.release(name, p.rank, writes);
        }
        CAPE_LOG_AT(debug, "locks") << "node " << p.rank << " gives '" << util::printable(name) << "' back"
                                    << (renew ? kept ? ", kept into its next window" : ", not kept (asked for)" : "");
        if (kept) {  // before anything of that window reaches the node (the same connection)
          ckpt::Checkpoint g;
          g.name = name;
          g.timestamp = 1;
          // (Not delivered: the node has ended; nothing to keep.)
          if (send_lock_frame(p, FrameType::lock_grant, renew_head(next_window, name), g, /*quiet=*/true)) {
            bool still;
            {
              std::lock_guard lk(mu_);
              still = locks_.confirm_renewal(name, p.rank, next_window, token);
            }
            if (!still) revoke(p.rank, name);  // asked for meanwhile: after the grant, on this connection
          }
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
