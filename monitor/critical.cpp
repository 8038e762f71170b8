#include "monitor/critical.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <span>
#include <stdexcept>

#include "ckpt/overlay.h"
#include "monitor/ckpt_ranges.h"
#include "monitor/create.h"
#include "monitor/inject.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {

namespace {
using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point& t) {
  Clock::time_point now = Clock::now();
  double us = std::chrono::duration<double, std::micro>(now - t).count();
  t = now;
  return us;
}
}  // namespace

Criticals::Criticals(Window& w, AddressSpace& as, DataSharing& sharing, Exchange* ex, int rank, int size,
                     bool trap_free)
    : window_(w), space_(as), sharing_(sharing), ex_(ex), rank_(rank), size_(size),
      trap_free_(trap_free && !(std::getenv("CAPE_LOCK_TRAP_FREE") && std::string(std::getenv("CAPE_LOCK_TRAP_FREE")) == "0")) {
  // A lease asked back (a reader thread of the network): its word closes first.
  // (On the master too since session 10: its own program keeps leases, for this alone.)
  // Bodies' writes logged since the monitor's last look (kLeaseLogged): the program is
  // stopped now (a tick) rather than at its next runtime call, which may be far
  // (docs/critical.md, "Session 10"). CAPE_LOCK_TICK=0: no tick.
  const bool tick = !(std::getenv("CAPE_LOCK_TICK") && std::string(std::getenv("CAPE_LOCK_TICK")) == "0");
  if (ex_ && trap_free_)
    ex_->set_lease_hook([this, tick](const std::string& name) {
      int word = leases_.end(name);
      if (word == 2 /* net::Node::kLeaseLogged */ && tick) leases_.tick();
      return word;
    });
}

Criticals::~Criticals() {
  if (ex_ && trap_free_) ex_->set_lease_hook({});
}

void Criticals::report_times(int rank) const {
  const Phases& p = phases_;
  if (!p.enters) return;
  double e = static_cast<double>(p.enters), x = static_cast<double>(p.exits ? p.exits : 1);
  CAPE_LOG_AT(info, "calls") << "rank " << rank << ": " << p.enters << " lock entries (" << p.granted_writes
                             << " grants with writes, " << p.known << " bodies with known writes), us per entry: capture "
                             << p.capture / e << ", grant wait " << p.grant_wait / e << ", inject " << p.inject / e << ", capture after it "
                             << p.recapture / e << "; per exit: capture " << p.exit_capture / x << ", release "
                             << p.release / x << "; " << leases_.entries() << " entries without a trap, "
                             << p.lease_reads << " reads of their targets (us each " << p.lease_read / std::max<double>(1, p.lease_reads)
                             << "), " << p.handed << " trapped entries left without a trap, " << leases_.ticks() << " ticks for leases asked back, " << leases_.taken()
                             << " entries found the word taken by another thread, " << leases_.waits()
                             << " times a call waited for such a body";
}

void Criticals::share(uint64_t addr, uint64_t size) {
  if (addr == 0 && size == 0) registered_ = true;  // the translator's "that is all"
  if (size > 0) shared_stack_.emplace_back(addr, addr + size);
}

void Criticals::reset(uint64_t start_boundary) {
  if (start_boundary) start_boundary_ = start_boundary;
  have_stack_ = false;
  lowest_boundary_ = 0;
  held_.clear();
  owner_ = 0;
  pending_ = ckpt::Checkpoint{};
  have_pending_ = false;
}

ckpt::Checkpoint Criticals::capture(const StoppedThread& st, uint64_t boundary, const IntervalSet* only) {
  if (!lowest_boundary_ || boundary < lowest_boundary_) lowest_boundary_ = boundary;
  CreateSide side{rank_, rank_ == 0 && size_ > 1, true};
  side.only = only;
  // Only bytes that changed: the diff keeps whole words in dense pages, and the unchanged
  // rest of a word would pass for a write made here, under a lock (stamped later than a
  // neighbour's own write, it would win the merge: crit_word.c under --model=mt --tracker
  // mprotect, one thread's own words lost) or not (a grant's word cut at its bytes: false
  // race warnings; docs/critical.md, "Bytes next to a lock's bytes").
  static const IntervalSet all = IntervalSet::everything();
  side.exact_in = &all;
  return monitor::create(st, window_, space_, sharing_, side, boundary);
}

namespace {
// Bytes of `c` stamped with the region's own timestamp `ts` that hold the value `pending`
// holds there under a lock's stamp: not new writes but the rest of a word the diff keeps
// whole in a dense page (a body wrote part of it, unchanged since). Laid over the pending
// part they would take the lock's stamp away, and another node's older value under that
// lock would win the merge (crit_word.c on 4 nodes: adds lost in 3 of 20 runs).
IntervalSet same_as_locked(const ckpt::Checkpoint& pending, const ckpt::Checkpoint& c, uint64_t ts) {
  // Only where both have runs (usually nowhere: a quick test first), then byte by byte.
  std::vector<IntervalSet::Interval> locked, mine;
  for (const ckpt::Run& r : pending.runs)
    if (r.timestamp > ts && !r.reduction.active()) locked.emplace_back(r.address, r.end());
  if (locked.empty() || c.runs.empty()) return {};
  for (const ckpt::Run& r : c.runs)
    if (r.timestamp <= ts && !r.reduction.active()) mine.emplace_back(r.address, r.end());
  IntervalSet l = IntervalSet::of(std::move(locked)), m = IntervalSet::of(std::move(mine));
  IntervalSet both = l.minus(l.minus(m));
  std::vector<IntervalSet::Interval> out;
  for (auto [lo, hi] : both)
    for (uint64_t x = lo; x < hi; x++) {
      const ckpt::Run* p = pending.find(x);
      const ckpt::Run* q = c.find(x);
      if (!p || !q || p->timestamp <= ts || q->timestamp > ts || p->reduction.active() || q->reduction.active())
        continue;
      const uint8_t* a = pending.at(x);
      const uint8_t* b = c.at(x);
      if (!a || !b || *a != *b) continue;
      if (!out.empty() && out.back().second == x)
        out.back().second++;
      else
        out.emplace_back(x, x + 1);
    }
  return IntervalSet::of(std::move(out));
}

IntervalSet pages_of(const std::vector<IntervalSet::Interval>& bytes) {
  std::vector<IntervalSet::Interval> pages;
  for (auto [lo, hi] : bytes)
    if (lo < hi) pages.emplace_back(page_down(lo), page_up(hi));
  return IntervalSet::of(std::move(pages));
}
}  // namespace

const std::vector<IntervalSet::Interval>& Criticals::stack_spans() {
  if (!have_stack_) {
    // The "[stack]" mapping and the private anonymous pieces next to it, whatever their
    // protection now (the mprotect tracker has made the unwritten ones read-only, and the
    // tracked set leaves those out): one span. Read once per window: /proc/PID/maps costs
    // as much as the rest of an entry's bookkeeping.
    stack_.clear();
    std::vector<Mapping> maps = read_maps(space_.pid());
    for (size_t i = 0; i < maps.size(); i++) {
      if (maps[i].path != "[stack]") continue;
      size_t lo = i, hi = i;
      while (lo > 0 && maps[lo - 1].end == maps[lo].start && maps[lo - 1].path.empty() && !maps[lo - 1].shared) lo--;
      while (hi + 1 < maps.size() && maps[hi].end == maps[hi + 1].start && maps[hi + 1].path.empty() &&
             !maps[hi + 1].shared)
        hi++;
      stack_.emplace_back(maps[lo].start, maps[hi].end);
      CAPE_LOG_AT(debug, "critical") << "the stack: " << ckpt::hex_address(maps[lo].start) << "-"
                                     << ckpt::hex_address(maps[hi].end);
    }
    have_stack_ = true;
  }
  return stack_;
}

IntervalSet Criticals::travelling(uint64_t boundary) {
  std::vector<IntervalSet::Interval> stack = stack_spans();
  for (auto& [lo, hi] : stack)  // the stack grew down since (a deeper call)
    if (boundary < lo && boundary + (uint64_t{64} << 20) > lo) lo = boundary;
  IntervalSet home = IntervalSet::of(std::move(stack)).minus(IntervalSet::of(shared_stack_));
  home = home.unite(sharing_.private_ranges(space_, boundary))
             .unite(sharing_.ranges([](Attr a) { return a == Attr::reduction || a == Attr::lastprivate; }));
  return IntervalSet::everything().minus(home);
}

void Criticals::attribute(ckpt::Checkpoint&& c, uint64_t boundary) {
  if (c.runs.empty() && c.mappings.empty()) return;
  if (!held_.empty() && held_.back().stamp != 0) {
    Held& h = held_.back();
    if (!registered_ && !warned_ && start_boundary_) warn_unregistered(c, h.name);
    ckpt::Checkpoint mine = ckpt::restamped(clip_to(c, travelling(boundary)), h.stamp);
    mine.mappings = c.mappings;  // memory the body mapped (its heap grew) exists where it goes
    h.body = ckpt::overlay(h.body, mine);
    c = ckpt::overlay(c, mine);
  } else if (have_pending_) {
    IntervalSet same = same_as_locked(pending_, c, region_timestamp(window_.region()));
    if (!same.empty()) c = clip_to(std::move(c), IntervalSet::everything().minus(same));
  }
  pending_ = have_pending_ ? ckpt::overlay(pending_, c) : std::move(c);
  have_pending_ = true;
}

// A body wrote the frame of the function that runs the region (its locals, or its callers'),
// and no file said which of those locals the region shares: a function of another file than
// the region's, writing the caller's variable through a pointer. Not carried: said once.
void Criticals::warn_unregistered(const ckpt::Checkpoint& c, const std::string& name) {
  for (const ckpt::Run& r : c.runs)
    for (auto [lo, hi] : stack_spans())
      if (r.end() > start_boundary_ && r.address < hi && r.end() > lo) {
        warned_ = true;
        CAPE_LOG_AT(warn, "critical")
            << "critical section or lock '" << name << "' wrote the stack of the function that runs the region (at "
            << ckpt::hex_address(std::max(r.address, start_boundary_))
            << "), whose file has no critical, atomic, ordered or lock: those bytes stay on this node. If they are "
               "a shared local variable written through a pointer, its value is lost: put the critical section "
               "in the region's file (docs/critical.md)";
        return;
      }
}

bool Criticals::enter(const StoppedThread& st, const std::string& name, uint64_t boundary, bool wait,
                      int64_t ticket, const std::vector<IntervalSet::Interval>* writes, uint64_t key,
                      uint64_t key_addr) {
  if (!may_enter(st.tid))  // the supervisor parks such calls (may_serve_now)
    throw std::logic_error("critical section '" + name + "' entered while another thread of the node holds one");
  for (const Held& h : held_)
    if (h.name == name) {
      if (!wait) return false;  // omp_test_lock of a lock this node holds: busy
      throw UserError("critical section or lock '" + name + "' entered again by the thread that holds it: it "
                      "would wait for itself forever (OpenMP: nested critical sections need different names)");
    }
  if (!networked()) {
    held_.push_back({name, 0, {}, false, {}, 0, 0});
    owner_ = st.tid;
    return true;
  }
  if (!window_.is_open())
    throw UserError("critical section or lock '" + name + "' entered outside a parallel region's window");
  // What the program wrote so far is captured while the request travels (it must only come
  // before the grant is injected): a slave's uncontended entry overlaps it with the round trip.
  // Not for a body with known writes: its exit capture looks at their pages only and keeps
  // as the body's only their bytes; what else changed there is filed as written before it.
  // (Not inside another lock: the enclosing body's writes before this one are its own.)
  const bool known = writes && held_.empty() && window_.tracker().kind() == TrackerKind::uffd;
  CAPE_LOG_AT(debug, "critical") << "entering '" << name << "' (a trap)";
  Clock::time_point t = Clock::now();
  phases_.enters++;
  phases_.known += known;
  std::function<void()> meanwhile;
  if (!known)
    meanwhile = [&] {
      attribute(capture(st, boundary), boundary);
      phases_.capture += us_since(t);
    };
  ckpt::Checkpoint grant = ex_->lock_acquire(name, window_.region(), wait, ticket, meanwhile);
  phases_.grant_wait += us_since(t);
  if (grant.timestamp == 0) return false;  // busy (stamps start at 1)
  const bool empty = grant.runs.empty() && grant.mappings.empty();
  uint64_t stamp = region_timestamp(window_.region()) + grant.timestamp;
  CAPE_LOG_AT(debug, "critical") << "enter '" << name << "': stamp " << grant.timestamp << ", "
                                 << grant.runs.size() << " runs from other holders"
                                 << (grant.runs.empty() ? "" : ", first at " + ckpt::hex_address(grant.runs[0].address));
  if (!empty) {
    grant.timestamp = region_timestamp(window_.region());
    // Opened first: the mprotect tracker keeps unwritten pages read-only inside the window,
    // and inject() accepts only memory the program can write now.
    for (const ckpt::Run& r : grant.runs) window_.tracker().before_write(st, r.address, r.end());
    monitor::inject(st, grant, "lock:" + name, window_, space_, sharing_, boundary);
    phases_.inject += us_since(t);
    phases_.granted_writes++;
    // The body's window starts after the grant. What else changed since the capture above
    // (the node's other threads kept running: the two-level model) is kept as written before
    // the body; the grant's bytes are not this node's writes.
    std::vector<IntervalSet::Interval> granted;
    for (const ckpt::Run& r : grant.runs)
      grant.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) { granted.emplace_back(a, a + b.size()); });
    // (A body with known writes: the granted pages alone; the rest keeps its marks.)
    IntervalSet granted_pages = pages_of(granted), granted_bytes = IntervalSet::of(std::move(granted));
    ckpt::Checkpoint since = capture(st, boundary, known ? &granted_pages : nullptr);
    attribute(clip_to(since, IntervalSet::everything().minus(granted_bytes)), boundary);
    phases_.recapture += us_since(t);
  }
  // A lease's body with known writes goes on in a slot of the program's words, as a re-entry
  // would: its exit needs no trap, its targets are read at the next call (collect_leases).
  // Not (yet) with several threads: one run of crit_mt_word.c under --model=mt failed in the
  // monitor (message lost) in about sixty with it; none without (docs/critical.md, "Session 10").
  // CAPE_LOCK_HAND_OVER=0: never; =mt: with several threads too (to look for that failure).
  static const std::string hand_over_env = std::getenv("CAPE_LOCK_HAND_OVER") ? std::getenv("CAPE_LOCK_HAND_OVER") : "";
  static const bool hand_over = hand_over_env != "0", hand_over_mt = hand_over_env == "mt";
  if (known && trap_free_ && hand_over && wait && ticket < 0 && (hand_over_mt || st.tracee.one_thread()) &&
      (leases_.mapped() || leases_.map(st))) {
    int slot = -1;
    if (ex_->lock_lease_hand_over(name, window_.region(), [&] {
          slot = leases_.assign_inside(name, key, key_addr, stamp, *writes);
          return slot >= 0;
        })) {
      answer_ = static_cast<long>(CAPE_LEASE_ENTERED) + slot;
      phases_.handed++;
      CAPE_LOG_AT(debug, "critical") << "'" << name << "' handed over to slot " << slot << ": its exit needs no trap";
      return true;
    }
  }
  held_.push_back({name, stamp, {}, known, known ? IntervalSet::of(*writes) : IntervalSet{}, key, key_addr});
  owner_ = st.tid;
  return true;
}

void Criticals::known_done(const StoppedThread& st, uint64_t boundary) {
  const IntervalSet& w = held_.back().writes;
  IntervalSet pages = pages_of({w.begin(), w.end()});
  ckpt::Checkpoint c = capture(st, boundary, &pages);
  ckpt::Checkpoint rest = clip_to(c, IntervalSet::everything().minus(w));
  rest.mappings.clear();  // (they go with the body's)
  attribute(clip_to(std::move(c), w), boundary);
  Held h = std::move(held_.back());
  held_.pop_back();
  // Written before the body (or meanwhile by the node's other threads): under the enclosing
  // lock, if any, else the region's own writes.
  attribute(std::move(rest), boundary);
  held_.push_back(std::move(h));
}

// Bodies entered without a trap since the monitor's last look (LeaseWords' logs): their
// targets' bytes are their writes, stamped with their lease's stamp, and go to the lease
// (sent now if it was asked back meanwhile). All the logs at once: two locks' targets may share
// a page, whose capture files what is not a target of the lock at hand as written before it.
// A new window: the slots of leases renewed into it (net/node_locks.cpp) stay, with the
// window's stamp, so that even its first entry needs no trap; the others are freed. The slot
// is closed first, then the lease looked at: a revoke in between finds it closed.
void Criticals::carry_leases() {
  carried_ = window_.region();
  for (const std::string& name : leases_.assigned()) {
    leases_.hold(name);
    uint64_t stamp = ex_->lock_lease_stamp(name, carried_);
    CAPE_LOG_AT(debug, "critical") << "window " << carried_ << ": lock '" << name << "' "
                                   << (stamp ? "renewed: entered without a trap" : "not leased: its slot is freed");
    if (stamp)
      leases_.restamp(name, region_timestamp(carried_) + stamp);
    else
      leases_.release(name);
  }
}

void Criticals::collect_leases(const StoppedThread& st, uint64_t boundary) {
  if (!leases_.mapped()) return;
  std::vector<LeaseWords::Logged> logs = leases_.logs();
  if (logs.empty()) return;
  Clock::time_point t = Clock::now();
  if (!held_.empty() || !window_.is_open())
    throw std::logic_error("bodies entered without a trap are logged while a lock is held or outside a window");
  std::vector<IntervalSet::Interval> all;
  for (const LeaseWords::Logged& l : logs) all.insert(all.end(), l.targets.begin(), l.targets.end());
  IntervalSet pages = pages_of(all), w = IntervalSet::of(std::move(all));
  ckpt::Checkpoint c = capture(st, boundary, &pages);
  ckpt::Checkpoint rest = clip_to(c, IntervalSet::everything().minus(w));
  rest.mappings.clear();
  // A body that wrote the region's frame from another file (warn_unregistered): said here too,
  // since bodies whose exits do not trap never pass attribute() (a lease's first entry either).
  if (!registered_ && !warned_ && start_boundary_) warn_unregistered(clip_to(c, w), logs.front().name);
  ckpt::Checkpoint bodies = clip_to(clip_to(std::move(c), w), travelling(boundary));
  attribute(std::move(rest), boundary);  // (no lock held: the region's own writes)
  for (LeaseWords::Logged& l : logs) {
    ckpt::Checkpoint mine = ckpt::restamped(clip_to(bodies, IntervalSet::of(std::move(l.targets))), l.run_stamp);
    mine.mappings = std::exchange(bodies.mappings, {});
    mine.timestamp = l.run_stamp;
    mine.name = l.name;
    pending_ = have_pending_ ? ckpt::overlay(pending_, mine) : mine;
    have_pending_ = true;
    int slot = l.slot;
    if (!ex_->lock_lease_writes(l.name, mine, [&] { leases_.done(slot, true); })) leases_.done(slot, false);
  }
  phases_.lease_reads++;
  phases_.lease_read += us_since(t);
}

void Criticals::lease_tick(const StoppedThread& st, uint64_t sp) {
  if (!leases_.mapped() || !window_.is_open() || !held_.empty()) return;
  if (!leases_.close_all(-1)) return;  // a body runs (another thread): its exit traps, then they are read
  // (The stack below the thread's pointer and its red zone holds no frame of the program's.)
  collect_leases(st, sp - 128);
  after_call();
}

long Criticals::exit(const StoppedThread& st, const std::string& name, uint64_t boundary) {
  if (!held_.empty() && owner_ != st.tid)
    throw UserError("end of critical section '" + name + "' by a thread that is not inside it (a lock unset by "
                    "another thread than the one that set it?)");
  if (held_.empty() || held_.back().name != name)
    throw UserError("end of critical section '" + name + "' " +
                    (held_.empty() ? std::string("without its beginning")
                                   : "inside critical section '" + held_.back().name + "'"));
  if (!networked()) {
    held_.pop_back();
    if (held_.empty()) owner_ = 0;
    return 0;
  }
  Clock::time_point t = Clock::now();
  phases_.exits++;
  if (held_.back().known)
    known_done(st, boundary);
  else
    attribute(capture(st, boundary), boundary);
  phases_.exit_capture += us_since(t);
  Held h = std::move(held_.back());
  held_.pop_back();
  if (held_.empty()) owner_ = 0;
  h.body.timestamp = h.stamp;
  h.body.name = name;
  CAPE_LOG_AT(debug, "critical") << "exit '" << name << "': " << h.body.runs.size() << " runs, "
                                 << h.body.memory_bytes() << " bytes";
  ex_->lock_release(name, h.body);
  phases_.release += us_since(t);
  // A node keeps the lease (net/node_locks.cpp; the master too, in-process): the next entries
  // of this body need no trap. The slot is given first, then the lease looked at: a revoke in
  // between finds the slot.
  if (!trap_free_ || !h.known || !held_.empty()) return 0;
  const uint64_t w = window_.region();
  if (!leases_.mapped() && (!ex_->lock_lease_stamp(name, w) || !leases_.map(st))) return 0;
  if (leases_.assign(name, h.key, h.key_addr, h.stamp) >= 0 && !ex_->lock_lease_stamp(name, w)) leases_.release(name);
  return CAPE_LEASE_READY;
}

ckpt::Checkpoint Criticals::with_pending(ckpt::Checkpoint&& fresh, uint64_t boundary) {
  if (!have_pending_) return std::move(fresh);
  std::vector<IntervalSet::Interval> below;
  for (auto [lo, hi] : stack_spans()) {
    // (Grown down since it was read: the deepest capture's frames are stack too.)
    if (lowest_boundary_ && lowest_boundary_ < lo && lowest_boundary_ + (uint64_t{64} << 20) > lo) lo = lowest_boundary_;
    if (lo < boundary) below.emplace_back(lo, std::min(hi, boundary));
  }
  ckpt::Checkpoint kept = clip_to(pending_, IntervalSet::everything().minus(IntervalSet::of(std::move(below))));
  IntervalSet same = same_as_locked(kept, fresh, region_timestamp(window_.region()));
  if (!same.empty()) fresh = clip_to(std::move(fresh), IntervalSet::everything().minus(same));
  ckpt::Checkpoint out = ckpt::overlay(kept, fresh);
  pending_ = ckpt::Checkpoint{};
  have_pending_ = false;
  return out;
}

}  // namespace cape::monitor
