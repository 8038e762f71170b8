// The monitor proper: serves the program's runtime calls (runtime/src/protocol.h) while the
// supervisor (supervisor.h) runs it. See monitor.h. One runtime call, one line of dispatch();
// the work is in the parts:
//
//   address_space.h   the executable, its TLS, the tracked set now
//   window.h          start() to stop(): the tracker and what create() keeps between calls
//   data_sharing.h    the clause calls' table (002 Sect. 4): what travels, what is private
//   create.h          create(): the checkpoint of what the program wrote
//   inject.h          inject(): writing one back
//   checkpoint_store.h  the node's checkpoints by name, --keep-checkpoints
//   places.h, races.h   start()'s call site; the race check and its reports (docs/tickpt.md)
//   exchange.h        send, receive, broadcast, wait_for: the network (net/, through cli/)
#include "monitor/monitor.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "monitor/address_space.h"
#include "monitor/call_times.h"
#include "monitor/cape1_calls.h"
#include "monitor/cape1_files.h"
#include "monitor/checkpoint_store.h"
#include "monitor/create.h"
#include "monitor/critical.h"
#include "monitor/data_sharing.h"
#include "monitor/deferred_calls.h"
#include "monitor/determinism.h"
#include "monitor/digest_source.h"
#include "monitor/inject.h"
#include "monitor/lazy.h"
#include "monitor/map_changes.h"
#include "monitor/places.h"
#include "monitor/races.h"
#include "monitor/supervisor.h"
#include "monitor/trace.h"
#include "monitor/window.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {

namespace {

std::string hex(uint64_t v) { return ckpt::hex_address(v); }

// A critical body's writes as the translator named them (protocol.h, CAPE_CRITICAL_WRITES_BIT):
// {address, size} pairs at `at` in the program, ending with {0, 0}.
std::vector<IntervalSet::Interval> body_writes(const StoppedThread& st, uint64_t at) {
  uint64_t pairs[2 * (CAPE_CRITICAL_MAX_WRITES + 1)] = {};
  size_t got = st.tracee.read_bytes_fallible(at, {reinterpret_cast<uint8_t*>(pairs), sizeof pairs});
  std::vector<IntervalSet::Interval> out;
  for (size_t i = 0; 16 * (i + 1) <= got; i++) {
    uint64_t a = pairs[2 * i], n = pairs[2 * i + 1];
    if (a == 0 && n == 0) return out;
    if (n == 0 || a + n < a || i == CAPE_CRITICAL_MAX_WRITES) break;
    out.emplace_back(a, a + n);
  }
  throw UserError("a critical section's list of writes at " + hex(at) +
                  " is not a list of at most " + std::to_string(CAPE_CRITICAL_MAX_WRITES) +
                  " {address, size} pairs ending with {0, 0} (libcape and cape-cc come from different versions?)");
}

class Monitor final : public CallServer {
 public:
  // Throws UserError for bad options (monitor.h), before anything starts.
  Monitor(const MonitorOptions& o, Exchange* ex)
      : opt_(o), ex_(ex), rank_(ex ? ex->rank() : o.node_rank), size_(ex ? ex->size() : 1), store_(rank_),
        criticals_(window_, space_, sharing_, ex_, rank_, size_, o.tracker == TrackerKind::uffd), cape1_(ex, rank_) {
    for (const auto& [name, file] : o.loads) store_.load(name, file);
    store_.keep_in(o.keep_checkpoints_dir);
    if (o.argv.empty()) throw UserError("no program to run");
    if (!o.trace_file.empty()) trace_ = std::make_unique<Trace>(rank_, size_, o.trace_epoch_us);
    if (o.sync_lazy && ex_ && size_ > 1) {
      // docs/monitor.md, "Lazy synchronisation": what it needs and why.
      if (o.tracker != TrackerKind::uffd && o.tracker != TrackerKind::mprotect)
        throw UserError(std::string("--sync=lazy needs --tracker uffd (the default) or mprotect, not ") +
                        to_string(o.tracker) + ": the others copy or protect the whole tracked set, which would fetch "
                        "every page at once; run with --tracker uffd or --sync=eager");
      if (!o.tracker_options.uffd_keep)
        throw UserError("--sync=lazy needs the uffd tracker to keep its registration between windows "
                        "(not --uffd-copy-all)");
      lazy_ = std::make_unique<LazySync>(*ex_, rank_, size_, program_copy_min_from_env());
      // Fetched pages get their originals at once: a lock's grant is captured right after its
      // inject (docs/critical.md, "Under --sync=lazy": at the next call was after that capture).
      window_.before_inject = [this](const ckpt::Checkpoint& c) {
        lazy_->before_inject(c);
        lazy_->at_call(window_.tracker());
      };
      window_.before_map_call = [this](long nr, const uint64_t(&args)[6]) { lazy_->before_mapping_call(nr, args); };
    }
  }

  ~Monitor() override {
    if (util::log_level("calls") >= util::LogLevel::info) {
      times_.report(rank_);
      CAPE_LOG_AT(info, "calls") << "rank " << rank_ << ": tracked set: " << space_.tracked_asks() << " asks, "
                                 << space_.tracked_computed() << " computed (the others kept: CAPE_TRACKED_KEPT)";
      criticals_.report_times(rank_);
    }
    if (lazy_) {
      const LazyStats& l = lazy_->stats();
      CAPE_LOG_AT(info, "traffic") << "rank " << rank_ << ": --sync=lazy: " << l.pages_invalidated
                                   << " pages invalidated, " << l.pages_fetched << " fetched in " << l.fetches
                                   << " requests, " << l.zero_pages << " zero pages; " << l.pages_published
                                   << " pages published, " << l.pages_kept << " pages kept, " << l.pages_resolved
                                   << " fetched to merge, " << l.own_merged << " own kept pages merged, "
                                   << l.eager_bytes << " bytes sent eagerly (" << l.broadcasts_once
                                   << " broadcasts made once for every slave); "
                                   << (window_.has_tracker() ? window_.tracker().pages_skipped : 0)
                                   << " written pages not read, "
                                   << (window_.has_tracker() ? window_.tracker().originals_from_source : 0)
                                   << " originals from the page service, "
                                   << (window_.has_tracker() ? window_.tracker().pages_opened : 0)
                                   << " kept pages left writable, " << l.program_copied
                                   << " published pages copied by the program in " << l.program_copies << " calls ("
                                   << lazy_->arena_slots() << " arena slots)";
      lazy_->reset();  // the handler stops before the tracker (its descriptor's owner) goes
    }
  }

  void new_image(pid_t pid) override;
  bool needs_mapping_calls() const override { return lazy_ != nullptr; }
  bool wants_mapping_calls() const override { return size_ > 1; }
  // (The notifier's thread.) Inside a window the tracker learns what the call drops
  // (DirtyTracker::before_drop), after lazy fetched what was not here.
  void before_mapping_call(long nr, const uint64_t (&args)[6]) override {
    const bool in_window = window_open_.load(std::memory_order_acquire);
    if (lazy_) lazy_->before_mapping_call(nr, args, in_window);
    if (!in_window) return;
    window_.tracker().before_mapping_call(nr, args);
    const pid_t pid = space_.pid();
    for (auto [s, e] : dropped_by(nr, args, [pid] { return program_brk_end(pid); }))
      window_.tracker().before_drop(nr, s, e);
  }
  long runtime_call(const StoppedThread& st, const user_regs_struct& regs) override;
  bool may_serve_now(pid_t tid, const user_regs_struct& regs) override {
    int op = static_cast<int>(regs.rax & 0xff);
    bool entry = op == CAPE_OP_CRITICAL_ENTER || op == CAPE_OP_ORDERED_ENTER || op == CAPE_OP_CRITICAL_TRY;
    // (No body runs without a trap while a call is served: docs/critical.md, "Trap-free re-entry".)
    return criticals_.close_leases(op == CAPE_OP_LEASE_EXIT ? static_cast<int>(regs.rdi & 0xff) : -1) &&
           (!entry || criticals_.may_enter(tid));
  }
  long serve(const StoppedThread& st, const user_regs_struct& regs);  // one call
  bool tracking_fault(const StoppedThread& st, const siginfo_t& info) override;
  void before_handler(const StoppedThread& st) override;
  void thread_exited(pid_t tid) override { window_.tracker().thread_exited(tid); }
  void crashed(const std::string& first_frames) override {
    if (ex_) ex_->program_crashed(first_frames);
  }
  void exited(const WaitStatus& ws) override {
    if (!ex_) return;
    // Where the program really was: inside a region's window, or in its sequential part
    // (a program cannot end inside a runtime call: the calls it made are done).
    ex_->set_region(window_.is_open() ? region_label()
                    : window_.region() ? "the sequential part after " + region_label()
                                       : "");
    // Its last words first (a slave's go to the master before its exit report).
    ex_->program_streams(output_in_region(), false);
    // (A CAPE-1 part on a slave node fails the job at once, as a slave's window does.)
    ex_->program_exited(ws.raw, window_.is_open() || (rank_ != 0 && cape1_.in_region()));
  }

 private:
  long dispatch(const StoppedThread& st, int op, uint64_t a1, uint64_t a2, uint64_t boundary);
  void checkpoint_tick(pid_t pid) override;
  void lease_tick(const StoppedThread& st, uint64_t sp) override {
    if (lazy_) lazy_->at_call(window_.tracker());  // (as at a call: before the logs are read)
    criticals_.lease_tick(st, sp);
  }
  std::optional<user_regs_struct> take_registers() override { return std::exchange(next_registers_, std::nullopt); }
  bool computes_next() const override { return computes_next_; }
  // The runtime calls (each returns the answer for the program, 0 unless it asks for one).
  long region_begin(const StoppedThread& st, uint64_t where, uint64_t loop, uint64_t boundary);
  void check_states();
  long start(const StoppedThread& st, uint64_t boundary, uint64_t flags = 0);
  long stop(const StoppedThread& st);
  long declare(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red = {});
  long reduction(uint64_t addr, uint64_t packed);
  long create(const StoppedThread& st, const std::string& name, uint64_t boundary);
  // --sync=lazy: the pages an `after` create() may keep without a diff (LazySync::undiffed).
  IntervalSet lazy_undiffed(const std::vector<Area>& areas) const;
  void open_kept(const StoppedThread& st);
  long inject(const StoppedThread& st, const std::string& name, uint64_t boundary);
  long send(const StoppedThread& st, const std::string& name, int node);
  long receive(const std::string& name);
  long broadcast(const StoppedThread& st, const std::string& name);
  long wait_for(const StoppedThread& st, const std::string& name);
  // Merges `part` (from node `from`) into the master's checkpoint `name` (004 3.2).
  void merge_part(const StoppedThread& st, const std::string& name, ckpt::Checkpoint&& part, int from);
  long merge(const StoppedThread& st, uint64_t into_name, uint64_t from_name);
  // The trace's name for a runtime call worth a slice (trace.h), or none.
  static std::optional<TraceOp> traced(int op);
  // What the program prints now is a region's (docs/net.md, "Output and input"): inside a
  // window, or a CAPE-1 part (cape1_files.h).
  bool output_in_region() const { return window_.is_open() || cape1_.in_region(); }
  // "parallel region 2 (prog.c:12)": the construct's place as the translator named it.
  std::string region_label() {
    return "parallel region " + std::to_string(window_.region()) + " (" + places_.start_site(space_) + ")";
  }
  // Stamps `c` as this node's next checkpoint `name`, keeps it if asked.
  void stamp_and_keep(ckpt::Checkpoint& c, const std::string& name);

  const MonitorOptions& opt_;
  Exchange* ex_;
  const int rank_, size_;
  AddressSpace space_;
  Window window_;
  DataSharing sharing_;
  CheckpointStore store_;
  Places places_;
  Criticals criticals_;                 // critical sections across nodes (critical.h)
  uint64_t begins_ = 0;                 // cape_region_begin() calls so far
  uint64_t refreshed_at_trap_ = 0;      // the trap (times_.traps) whose region_begin refreshed uffd's copies
  // CAPE_START_REUSES_REFRESH=0: start() scans as if no refresh came before it (A/B figures).
  static bool start_reuses_refresh() {
    static const bool on = !(std::getenv("CAPE_START_REUSES_REFRESH") &&
                             std::string(std::getenv("CAPE_START_REUSES_REFRESH")) == "0");
    return on;
  }
  bool computes_next_ = true;           // the last trap was not a region_begin
  std::atomic<bool> window_open_{false};  // window_.is_open(), for the notifier's thread
  std::optional<StateDigest> unchecked_;  // the master's digest, until the slaves' are compared
  std::optional<StateDigest> last_digest_;  // the previous region's begin, when the tracker follows changes
  IntervalSet last_zeroed_;
  CallTimes times_;
  // The names of the calls deferred on the current trap, read with them (protocol.h):
  // `at` is their address in the program, `bytes` what was read; empty between traps.
  struct Names {
    uint64_t at = 0;
    std::string_view bytes;
  } names_;
  // A runtime call's C string: from names_ when it is one of them, else from the program.
  std::string name_at(const StoppedThread& st, uint64_t p) const {
    if (p >= names_.at && p - names_.at < names_.bytes.size()) {
      std::string_view rest = names_.bytes.substr(p - names_.at);
      size_t nul = rest.find('\0');
      if (nul != std::string_view::npos) return std::string(rest.substr(0, nul));
    }
    return st.tracee.read_constant_string(p);
  }
  uint64_t drained_at_trap_ = 0;  // the trap (times_.traps) at which the program's output was last read
  std::unique_ptr<Trace> trace_;  // --trace: null when off (one test per call)
  Trace::Moved moved_;            // what the call being served moved, for the trace
  RaceReport races_;  // what the merges found, said once per region
  Cape1Files cape1_;                               // 003 Fig. 2's calls on checkpoint files
  std::optional<user_regs_struct> next_registers_;  // restart(file)'s, for the supervisor
  std::unique_ptr<LazySync> lazy_;  // --sync=lazy on a node of a job (lazy.h); null otherwise
  std::vector<uint64_t> undiffed_pages_;  // --sync=lazy: pages the slave's last `after` create() kept whole

 public:
  void finish_trace() {
    if (!trace_) return;
    trace_->finish(Trace::Clock::now());
    trace_->write(opt_.trace_file);
  }
  // Regions where --check-races found races (run_monitor's status depends on it).
  uint64_t race_regions() const { return races_.regions(); }
};

void Monitor::checkpoint_tick(pid_t pid) { periodic_checkpoint(pid, opt_.checkpoint_file, window_.is_open()); }

void Monitor::new_image(pid_t pid) {
  if (lazy_) lazy_->reset();
  window_.reset(make_tracker(opt_.tracker, pid, opt_.tracker_options));
  space_.reset(pid);
  criticals_.new_image();  // (the page of trap-free re-entry went with the old image)
  if (trace_) trace_->program_started(Trace::Clock::now());
}

std::optional<TraceOp> Monitor::traced(int op) {
  switch (op) {
    case CAPE_OP_REGION_BEGIN: return TraceOp::region_begin;
    case CAPE_OP_START: return TraceOp::start;
    case CAPE_OP_STOP: return TraceOp::stop;
    case CAPE_OP_CREATE: return TraceOp::create;
    case CAPE_OP_INJECT: return TraceOp::inject;
    case CAPE_OP_SEND: return TraceOp::send;
    case CAPE_OP_RECEIVE: return TraceOp::receive;
    case CAPE_OP_WAIT_FOR: return TraceOp::wait_for;
    case CAPE_OP_MERGE: return TraceOp::merge;
    case CAPE_OP_BROADCAST: return TraceOp::broadcast;
    default: return std::nullopt;
  }
}

// Every runtime call passes here, the program stopped: the place for work due at each call
// (window_.is_open() says whether the program is inside a region's window).
long Monitor::runtime_call(const StoppedThread& st, const user_regs_struct& regs) {
  ++times_.traps;
  if (lazy_) lazy_->at_call(window_.tracker());
  criticals_.collect_leases(st, regs.rdx);  // before anything else captures
  // Calls deferred by libcape ride on this trap and are served first, in order (protocol.h).
  if (regs.r8 != 0) {
    DeferredCalls calls = read_deferred_calls(st.tracee, regs.r8, regs.r9);
    names_ = {calls.names_at, calls.names};
    struct Forget {
      Names& n;
      ~Forget() { n = {}; }  // the program runs again after this trap
    } forget{names_};
    for (uint64_t i = 0; i < calls.n; i++) {
      user_regs_struct d = regs;
      d.rax = calls[i].op;
      d.rdi = calls[i].a1;
      d.rsi = calls[i].a2;
      d.rdx = calls[i].boundary;
      d.r8 = 0;
      serve(st, d);
    }
  }
  long answer = serve(st, regs);
  criticals_.after_call();
  // region_begin: the region's start() follows at once.
  computes_next_ = (regs.rax & 0xff) != CAPE_OP_REGION_BEGIN;
  return answer;
}

long Monitor::serve(const StoppedThread& st, const user_regs_struct& regs) {
  int op = static_cast<int>(regs.rax & 0xff);
  auto t0 = std::chrono::steady_clock::now();
  if (times_.last != std::chrono::steady_clock::time_point{}) {
    double gap = std::chrono::duration<double, std::micro>(t0 - times_.last).count();
    times_.between_us += gap;
    // (The name read only when the figures are reported: one read of the program per create.)
    if (op == CAPE_OP_CREATE && window_.is_open() && util::log_level("calls") >= util::LogLevel::info &&
        name_at(st, regs.rdi) == "after")
      times_.compute_us += gap;
  }
  struct Timed {
    CallTimes& t;
    int op;
    std::chrono::steady_clock::time_point t0;
    ~Timed() {
      t.last = std::chrono::steady_clock::now();
      if (op > 0 && op < CAPE_OP_COUNT) {
        t.count[op]++;
        t.us[op] += std::chrono::duration<double, std::micro>(t.last - t0).count();
      }
    }
  } timed{times_, op, t0};
  space_.at_runtime_call(st.tracee, st.tid, regs.fs_base);
  // What the program printed before this call, in the phase it printed it (before anything
  // the call sends: a slave's region lines reach the master before its checkpoint does).
  bool was_open = output_in_region();
  // Once per trap: the program does not run between the calls deferred on one trap (two
  // reads of empty pipes per call were ~10% of an empty region's system calls).
  if (ex_ && drained_at_trap_ != times_.traps) {
    ex_->program_streams(was_open, was_open);
    drained_at_trap_ = times_.traps;
  }
  if (trace_) moved_ = {};
  long answer = dispatch(st, op, regs.rdi, regs.rsi, regs.rdx);
  // (The pipes were read at this trap's first call: the program has not run since.)
  if (ex_ && output_in_region() != was_open) ex_->program_streams(was_open, output_in_region(), false);
  if (trace_)
    if (auto t = traced(op)) trace_->call(*t, t0, std::chrono::steady_clock::now(), moved_);
  return answer;
}

bool Monitor::tracking_fault(const StoppedThread& st, const siginfo_t& info) {
  return window_.is_open() && window_.tracker().on_fault(st, info);
}

void Monitor::before_handler(const StoppedThread& st) {
  if (!window_.is_open() || !st.gadget) return;
  // The kernel writes the signal frame below the stack pointer, which a read-only stack
  // page would turn into a forced SIGSEGV. Open those pages first.
  uint64_t sp = Tracee::get_regs(st.tid).rsp;
  window_.tracker().before_write(st, sp > 32768 ? sp - 32768 : 0, sp);
}

long Monitor::dispatch(const StoppedThread& st, int op, uint64_t a1, uint64_t a2, uint64_t boundary) {
  auto name = [&](uint64_t p) { return name_at(st, p); };
  switch (op) {
    case CAPE_OP_HELLO: return 0;
    case CAPE_OP_MASTER: return rank_ == 0;
    case CAPE_OP_NODE_ID: return rank_;
    case CAPE_OP_NUM_NODES: return size_;
    case CAPE_OP_REGION_BEGIN: return region_begin(st, a1, a2, boundary);
    case CAPE_OP_LAST_PARALLEL: return 0;  // not knowable here; see docs/monitor.md
    case CAPE_OP_START: return start(st, boundary, a1);
    case CAPE_OP_SET_SHARED: return declare(Attr::shared, a1, a2);
    case CAPE_OP_SET_PRIVATE: return declare(Attr::priv, a1, a2);
    case CAPE_OP_SET_FIRSTPRIVATE: return declare(Attr::firstprivate, a1, a2);
    case CAPE_OP_SET_LASTPRIVATE: return declare(Attr::lastprivate, a1, a2);
    case CAPE_OP_SET_COPYIN: return declare(Attr::copyin, a1, a2);
    case CAPE_OP_SET_COPYPRIVATE: return declare(Attr::copyprivate, a1, a2);
    case CAPE_OP_SET_THREADPRIVATE: return declare(Attr::threadprivate, a1, a2);
    case CAPE_OP_SET_DEFAULT_NONE: return sharing_.set_default_none(), 0;
    case CAPE_OP_REDUCTION: return reduction(a1, a2);
    case CAPE_OP_SET_CKPT_MODEL: return sharing_.set_model(a1), 0;
    case CAPE_OP_SET_ORDER: return sharing_.set_order(static_cast<int64_t>(a1)), 0;
    case CAPE_OP_STOP: return stop(st);
    case CAPE_OP_CREATE: return create(st, name(a1), boundary);
    case CAPE_OP_INJECT: return inject(st, name(a1), boundary);
    case CAPE_OP_SEND: return send(st, name(a1), static_cast<int>(static_cast<int64_t>(a2)));
    case CAPE_OP_RECEIVE: return receive(name(a1));
    case CAPE_OP_BROADCAST: return broadcast(st, name(a1));
    case CAPE_OP_WAIT_FOR: return wait_for(st, name(a1));
    case CAPE_OP_MERGE: return merge(st, a1, a2);
    case CAPE_OP_CREATE_COMPLETE:
      cape1_.created(a2);  // (a marked frame: a translated region's checkpoint)
      return create_complete_call(st.tracee.pid(), st.tid, name(a1), window_.is_open(), a2);
    case CAPE_OP_CRITICAL_ENTER: {
      if (!(a2 & CAPE_CRITICAL_WRITES_BIT))
        return criticals_.enter(st, name(a1) + (a2 ? "@" + hex(a2) : ""), boundary), 0;
      std::vector<IntervalSet::Interval> writes = body_writes(st, a2 & ~CAPE_CRITICAL_WRITES_BIT);
      std::string lock = name(a1);
      if (lock == "atomic") lock += "@" + hex(writes.empty() ? 0 : writes[0].first);
      uint64_t at = lock.starts_with("atomic@") && !writes.empty() ? writes[0].first : 0;  // (libcape's key: lease_words.h)
      return criticals_.enter(st, lock, boundary, true, -1, &writes, a1, at), criticals_.take_answer();
    }
    case CAPE_OP_CRITICAL_EXIT: return criticals_.exit(st, name(a1) + (a2 ? "@" + hex(a2) : ""), boundary);
    case CAPE_OP_LEASE_EXIT: return 0;  // (its body's writes were read first: runtime_call)
    case CAPE_OP_CRITICAL_SHARED: return criticals_.share(a1, a2), 0;
    case CAPE_OP_C1_COPY: return cape1_.copy(name(a1), name(a2)), 0;
    case CAPE_OP_C1_DIFF: {
      uint64_t names[3];
      st.tracee.read_bytes(a1, {reinterpret_cast<uint8_t*>(names), sizeof names});
      return cape1_.diff(name(names[0]), name(names[1]), name(names[2])), 0;
    }
    case CAPE_OP_C1_MERGE: return cape1_.merge(name(a1), name(a2)), 0;
    case CAPE_OP_C1_SEND: return cape1_.send(name(a1), static_cast<int>(a2)), 0;
    case CAPE_OP_C1_WAIT_FOR: return cape1_.wait_for(name(a1)), 0;
    case CAPE_OP_C1_RESTART_ON: return cape1_.restart_on(a1 ? name(a1) : std::string(), static_cast<int>(a2)), 0;
    case CAPE_OP_C1_SERVE: {
      if (window_.is_open()) throw UserError("cape1_serve() inside a parallel region's window");
      std::optional<user_regs_struct> r = cape1_.serve(st.tracee.pid(), st.tid);
      if (!r) return 1;  // the master's program ended
      next_registers_ = r;
      return 0;
    }
    case CAPE_OP_C1_RESTART:
      if (window_.is_open()) throw UserError("restart() inside a parallel region's window");
      next_registers_ = cape1_.restart(st.tracee.pid(), st.tid, st.gadget, name(a1));
      return 0;
    case CAPE_OP_ORDERED_ENTER: {
      bool wait = !(a2 & CAPE_ORDERED_TRY_BIT);  // else cape_ordered_try: 1 entered, 0 not its turn yet
      bool in = criticals_.enter(st, name(a1), boundary, wait, static_cast<int64_t>(a2 & ~CAPE_ORDERED_TRY_BIT));
      return wait ? 0 : in;
    }
    case CAPE_OP_CRITICAL_TRY: return criticals_.enter(st, name(a1) + (a2 ? "@" + hex(a2) : ""), boundary, false);
    default:
      throw UserError("unknown runtime call " + std::to_string(op) +
                      " (libcape and cape come from different versions?)");
  }
}

// A parallel region begins (libcape_cc's fork): every node must hold the same memory here.
long Monitor::region_begin(const StoppedThread& st, uint64_t where, uint64_t loop, uint64_t boundary) {
  ++begins_;
  criticals_.new_region();
  // (Deferred, the site was copied into libcape's list: name_at finds it there.)
  std::string site = where ? name_at(st, where) : std::string();
  places_.set_region_site(site);
  if (ex_) ex_->region_begun(begins_);
  if (trace_) moved_.site = site;
  if (ex_ && size_ > 1) {
    // Not the stack: its unused bytes (a local not yet written, the slots of a call made on
    // one node only) legitimately differ between nodes.
    std::vector<Area> areas = space_.tracked(boundary);
    std::erase_if(areas, [](const Area& a) { return a.kind == Area::stack; });
    auto t0 = std::chrono::steady_clock::now();
    // Only what may have changed since the previous region's begin is read again, when the
    // tracker can say (uffd; determinism.h).
    DigestSource src = digest_source(st, window_, lazy_.get(), space_.tracked(0), sharing_.model(), areas);
    std::optional<DirtyTracker::Changes>& ch = src.changes;
    if (src.copies) {  // the tracker's copies are memory's now: start() may take them (below)
      refreshed_at_trap_ = times_.traps;
      (void)st.tracee.take_written();
    }
    auto t_changes = std::chrono::steady_clock::now();
    // --sync=lazy: pages a merge published may not be here yet on a slave; every node counts
    // them as zeros (docs/monitor.md, "Lazy synchronisation").
    const IntervalSet zeroed =
        lazy_ ? sharing_.threadprivate_ranges().unite(lazy_->ever_lazy()) : sharing_.threadprivate_ranges();
    IntervalSet dirty;
    const bool incremental = ch && last_digest_;
    if (incremental) {
      std::vector<IntervalSet::Interval> all;
      for (const Area& a : areas) all.emplace_back(a.start, a.end);
      dirty = ch->changed.unite(IntervalSet::of(std::move(all)).minus(ch->covered));
      // What counts as zeros changed (lazy publishes new pages at every merge): the chunks
      // that meet the difference are hashed again, the others keep their hash.
      if (!(last_zeroed_ == zeroed)) dirty = dirty.unite(zeroed.minus(last_zeroed_)).unite(last_zeroed_.minus(zeroed));
    }
    StateDigest d = digest_state(st.tracee, areas, zeroed, incremental ? &*last_digest_ : nullptr, &dirty,
                                 src.copies ? &src.copies : nullptr);
    if (ch) {
      last_digest_ = d;
      last_zeroed_ = zeroed;
    } else {
      last_digest_.reset();
    }
    uint64_t bytes = 0;
    for (const Area& a : areas) bytes += a.size();
    CAPE_LOG_AT(debug, "monitor") << "region_begin(" << site << "): changes "
                                  << std::chrono::duration<double, std::milli>(t_changes - t0).count()
                                  << (src.copies ? " ms (copies), digest of " : " ms, digest of ") << bytes / 1024 << " KiB in "
                                  << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()
                                  << " ms";
    d.begin = begins_;
    d.where = site;
    d.loop = loop;  // (cape_region_begin_loop: the nodes deal themselves their shares)
    if (rank_ == 0)
      unchecked_ = std::move(d);
    else
      ex_->report_state(begins_, encode_state(d));
  }
  return size_;
}

// The master, once every slave's part of the region has arrived (their digests came first).
void Monitor::check_states() {
  if (!unchecked_) return;
  StateDigest mine = std::move(*unchecked_);
  unchecked_.reset();
  for (auto& [rank, blob] : ex_->states(mine.begin)) {
    std::string why = compare_states(mine, decode_state(blob), rank, places_.symbols(space_));
    if (!why.empty()) throw UserError(why);
  }
}

long Monitor::start(const StoppedThread& st, uint64_t boundary, uint64_t flags) {
  // The digest's refresh was made at this trap (region_begin deferred onto start()'s): the
  // program has not run since. Only while it has one thread: another (--model=mt's team,
  // between regions) may write while this one is stopped, which start()'s scan would take
  // into DATA-0 and the refresh, made earlier, would not.
  const bool after_refresh =
      refreshed_at_trap_ == times_.traps && start_reuses_refresh() && st.tracee.one_thread();
  refreshed_at_trap_ = 0;
  if (window_.is_open()) stop(st);
  criticals_.reset(boundary);
  // Before tracking starts: the region's table, reduction identities, private values kept.
  sharing_.begin(window_.region() + 1, st.tracee);
  places_.at_start(st.tracee, boundary);
  std::vector<Area> areas = space_.tracked(0);
  std::vector<ckpt::MapChange> map_state = anon_state(areas);
  // TICKPT: DATA-0 is a copy of the shared data only (002 Sect. 4.3).
  if (sharing_.model() == CkptModel::tickpt) areas = restrict_areas(areas, sharing_.tickpt_cover(areas));
  if (lazy_) {
    window_.tracker().set_not_here(lazy_->invalid());
    window_.tracker().set_original_source(lazy_->original_source());
  }
  if (after_refresh) {
    // What the monitor wrote since (sharing_.begin: reduction identities, private values)
    // is all the tracker must read again (uffd: no scan of the tracked set; issue 14).
    Tracee::Written w = st.tracee.take_written();
    if (!w.overflow) window_.tracker().start_after_refresh(IntervalSet::of(std::move(w.ranges)));
  }
  auto t0 = std::chrono::steady_clock::now();
  window_.open(st, std::move(areas), std::move(map_state));
  window_open_.store(true, std::memory_order_release);
  auto t1 = std::chrono::steady_clock::now();
  if (lazy_) {
    lazy_->after_start();
    // (The master's share follows its `before`, which opens them, unless it makes none.)
    if (rank_ != 0 || (flags & CAPE_START_OWN_SHARE)) open_kept(st);
    CAPE_LOG_AT(debug, "monitor") << "start(): open " << std::chrono::duration<double, std::milli>(t1 - t0).count()
                                  << " ms, missing mode again, kept pages opened "
                                  << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count()
                                  << " ms";
  }
  // Names the region in the job's failure messages (docs/net.md).
  if (ex_) ex_->set_region(region_label());
  CAPE_LOG_AT(debug, "monitor") << "start(): " << window_.at_start().size() << " areas, tracker "
                                << to_string(window_.tracker().kind()) << ", " << sharing_.vars().size()
                                << " attributed variables, "
                                << (sharing_.model() == CkptModel::tickpt ? "TICKPT" : "DICKPT");
  return window_.tracker().start_answer();
}

long Monitor::stop(const StoppedThread& st) {
  if (!window_.is_open()) return 0;
  if (criticals_.holding())
    throw UserError("stop(): the region's window closes inside a critical section (a barrier or the region's "
                    "end inside it?)");
  criticals_.reset();
  window_open_.store(false, std::memory_order_release);
  window_.close(st);
  sharing_.end(window_.region(), st.tracee);
  return 0;
}

long Monitor::declare(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red) {
  if (window_.is_open())
    throw UserError("data-sharing call for " + hex(addr) + " inside start() ... stop(): clause calls "
                    "come before the region's cape_start() (002 Fig. 7)");
  sharing_.declare(a, addr, size, red);
  return 0;
}

// cape_reduction(&v, op, type): the operator and type packed above the size (protocol.h).
long Monitor::reduction(uint64_t addr, uint64_t packed) {
  ckpt::Reduction r{static_cast<ckpt::ReduceOp>((packed >> CAPE_RED_SIZE_BITS) & 0xff),
                    static_cast<ckpt::ElemType>((packed >> (CAPE_RED_SIZE_BITS + 8)) & 0xff)};
  uint64_t size = packed & ((uint64_t{1} << CAPE_RED_SIZE_BITS) - 1);
  if (r.op == ckpt::ReduceOp::none || static_cast<int>(r.op) > static_cast<int>(ckpt::ReduceOp::max) ||
      r.type == ckpt::ElemType::none || static_cast<int>(r.type) > static_cast<int>(ckpt::ElemType::f64))
    throw UserError("cape_reduction(" + hex(addr) + "): unknown operator or type (" +
                    std::to_string(static_cast<int>(r.op)) + ", " + std::to_string(static_cast<int>(r.type)) + ")");
  try {
    ckpt::check_reduction(r, size);
  } catch (const ckpt::Error& e) {
    throw UserError("cape_reduction(" + hex(addr) + ", " + std::to_string(size) + "): " + e.what());
  }
  return declare(Attr::reduction, addr, size, r);
}

void Monitor::stamp_and_keep(ckpt::Checkpoint& c, const std::string& name) {
  store_.stamp(c, name);
  if (!space_.exe().empty()) c.load_base = space_.load_base();
  store_.keep(c);
}

long Monitor::create(const StoppedThread& st, const std::string& name, uint64_t boundary) {
  if (!window_.is_open()) throw UserError("create(\"" + name + "\") outside start() ... stop()");
  CreateSide side{.rank = rank_, .keep_base = rank_ == 0 && size_ > 1, .with_stack = name != "before"};
  // --sync=lazy, an `after`: the pages the node keeps again need no diff (lazy.h).
  IntervalSet undiffed;
  if (lazy_ && name == "after" && !criticals_.holding()) {
    undiffed = lazy_undiffed(space_.tracked(0));
    side.undiffed = &undiffed;
    side.undiffed_out = &undiffed_pages_;
    undiffed_pages_.clear();
  }
  ckpt::Checkpoint out = criticals_.with_pending(monitor::create(st, window_, space_, sharing_, side, boundary), boundary);
  stamp_and_keep(out, name);
  CAPE_LOG_AT(debug, "monitor") << "create(\"" << name << "\"): " << out.runs.size() << " runs, "
                                << out.memory_bytes() << " bytes, " << window_.tracker().pages_visited
                                << " pages visited so far, " << window_.tracker().faults << " faults";
  if (trace_) moved_ = {name, out.memory_bytes(), out.runs.size()};
  store_.put(name, std::move(out));
  // The master's share comes next (its `before` is made: what it wrote since start()).
  if (lazy_ && rank_ == 0 && name == "before") open_kept(st);
  return 0;
}

IntervalSet Monitor::lazy_undiffed(const std::vector<Area>& areas) const {
  std::vector<IntervalSet::Interval> vars;
  for (const Var& v : sharing_.vars()) vars.emplace_back(page_down(v.addr), page_up(v.addr + v.size));
  return lazy_->undiffed(areas, IntervalSet::of(std::move(vars)).unite(sharing_.threadprivate_ranges()));
}

// --sync=lazy: the pages this node keeps again take no fault until its `after` create()
// skips them (DirtyTracker::open_until_collect); the master's share follows its `before`.
void Monitor::open_kept(const StoppedThread& st) {
  if (criticals_.holding()) return;
  IntervalSet pages = lazy_undiffed(window_.at_start());  // (mprotect: the maps show them read-only now)
  pages = pages.minus(pages.minus(spans_of(window_.at_start()))).minus(pages.minus(lazy_->kept_two_ago()));
  window_.tracker().open_until_collect(st, pages);
}

long Monitor::inject(const StoppedThread& st, const std::string& name, uint64_t boundary) {
  // An inject between region_begin and start() (a slave's `before` under --model=mt,
  // --master-idle or copyin rides on that trap): start() scans for what it wrote.
  refreshed_at_trap_ = 0;
  const ckpt::Checkpoint& c = store_.lookup(name, "inject");
  if (trace_) moved_ = {name, c.memory_bytes(), c.runs.size()};
  auto t0 = std::chrono::steady_clock::now();
  if (lazy_ && rank_ == 0 && name == "after")
    monitor::inject(st, lazy_->without_own(c), name, window_, space_, sharing_, boundary);
  else
    monitor::inject(st, c, name, window_, space_, sharing_, boundary);
  auto t1 = std::chrono::steady_clock::now();
  if (lazy_) {
    lazy_->after_inject(st, name, window_.tracker());
    CAPE_LOG_AT(debug, "monitor") << "inject('" << name << "'): " << c.runs.size() << " runs, "
                                  << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms; invalidation "
                                  << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count()
                                  << " ms";
  }
  return 0;
}

long Monitor::send(const StoppedThread& st, const std::string& name, int node) {
  if (!ex_)
    throw UserError("send(\"" + name + "\", " + std::to_string(node) +
                    "): this program runs alone under `cape monitor`; use `cape run -n N`");
  if (node < 0 || node >= size_ || node == rank_)
    throw UserError("send(\"" + name + "\", " + std::to_string(node) + "): no such other node (" +
                    std::to_string(size_) + " nodes)");
  const ckpt::Checkpoint& c = store_.lookup(name, "send");
  if (lazy_ && rank_ != 0 && node == 0 && name == "after") {
    // --sync=lazy: the pages it alone may have written stay here (lazy.h), published once
    // the part is on its way (the master merges meanwhile; a request waits for them).
    ex_->begin_publishing();
    struct Published {
      Exchange& ex;
      int unwinding = std::uncaught_exceptions();
      ~Published() { ex.end_publishing(std::uncaught_exceptions() == unwinding); }  // (torn if the program died)
    } published{*ex_};
    ckpt::Checkpoint out =
        lazy_->outgoing(c, space_.tracked(0), sharing_.threadprivate_ranges(), std::move(undiffed_pages_));
    undiffed_pages_.clear();
    out.name = c.name;
    if (trace_) moved_ = {name, out.memory_bytes(), out.runs.size(), node};
    ex_->send(out, node);
    lazy_->publish_pending(st, window_.tracker());
    return 0;
  }
  if (trace_) moved_ = {name, c.memory_bytes(), c.runs.size(), node};
  ex_->send(c, node);
  return 0;
}

long Monitor::receive(const std::string& name) {
  if (!ex_)
    throw UserError("receive(\"" + name + "\"): this program runs alone under `cape monitor`;"
                    " use `cape run -n N`, or give it with --load " + name + "=FILE");
  ckpt::Checkpoint c = ex_->receive(name);
  c.name = name;
  if (lazy_) lazy_->received(name, c);
  if (trace_) moved_ = {name, c.memory_bytes(), c.runs.size()};
  store_.put(name, std::move(c));
  return 0;
}

long Monitor::broadcast(const StoppedThread& st, const std::string& name) {
  ckpt::Checkpoint& c = store_.lookup(name, "broadcast");
  if (lazy_)
    lazy_->broadcast(st, c, space_.tracked(0), sharing_.threadprivate_ranges(), window_.tracker());
  else if (ex_ && size_ > 1)
    ex_->broadcast(c);
  if (trace_)
    moved_ = {name, ex_ && size_ > 1 ? c.memory_bytes() * static_cast<uint64_t>(size_ - 1) : 0, c.runs.size()};
  return 0;
}

// Receives every slave's part and merges them as they arrive (004_9e6a480351e099dd.txt 3.2).
long Monitor::wait_for(const StoppedThread& st, const std::string& name) {
  if (trace_) moved_.checkpoint = name;
  if (lazy_) {
    lazy_->begin_merge();
    if (const ckpt::Checkpoint* mine = store_.find(name)) lazy_->note_part(0, *mine);
    lazy_->take_own(undiffed_pages_);  // what its `after` create() kept whole
    undiffed_pages_.clear();
  }
  if (ex_ && size_ > 1) {
    ex_->wait_for(name, [&](ckpt::Checkpoint&& part, int from) {
      if (lazy_) lazy_->take_part(from, part);
      auto arrived = std::chrono::steady_clock::now();
      uint64_t part_bytes = trace_ ? part.memory_bytes() : 0, part_runs = part.runs.size();
      moved_.bytes += part_bytes;
      moved_.runs += part_runs;
      struct PartDone {
        Monitor& m;
        int from;
        uint64_t bytes, runs;
        std::chrono::steady_clock::time_point t0;
        ~PartDone() {
          if (m.trace_) m.trace_->part(from, bytes, runs, t0, std::chrono::steady_clock::now());
        }
      } part_done{*this, from, part_bytes, part_runs, arrived};
      merge_part(st, name, std::move(part), from);
    });
    if (lazy_) {
      // --sync=lazy: the pages a slave kept that another node wrote too (lazy.h).
      auto base = [&](uint64_t address, std::span<uint8_t> out) { window_.read_base(st.tracee, address, out); };
      auto now = [&](uint64_t address, std::span<uint8_t> out) { st.tracee.read_bytes(address, out); };
      for (auto& [from, part] : lazy_->resolve(name, region_timestamp(window_.region()), base, now))
        merge_part(st, name, std::move(part), from);
    }
    races_.say(region_label(), opt_.check_races);
  }
  if (ex_ && size_ > 1) check_states();  // before the merged parts are injected anywhere
  if (!store_.find(name)) store_.put(name, ckpt::Checkpoint{});
  stamp_and_keep(*store_.find(name), name);
  return 0;
}

void Monitor::merge_part(const StoppedThread& st, const std::string& name, ckpt::Checkpoint&& part, int from) {
  ckpt::Checkpoint* have = store_.find(name);
  if (!have) {
    part.name = name;
    store_.put(name, std::move(part));
    return;
  }
  ckpt::MergeOptions mo;
  // Three-way merge against the master's DATA-0: runs carry the unchanged bytes
  // between changed words, so two nodes writing neighbouring elements overlap; the
  // side that still holds the base value yields (no lost update, no false race).
  mo.read_base = [&](uint64_t address, std::span<uint8_t> out) { window_.read_base(st.tracee, address, out); };
  ckpt::MergeResult m = ckpt::merge(*have, part, mo);
  races_.add(possible_races(m.conflicts, sharing_, space_), from, window_.region(), places_, space_);
  *have = std::move(m.merged);
}

long Monitor::merge(const StoppedThread& st, uint64_t into_name, uint64_t from_name) {
  std::string into = st.tracee.read_c_string(into_name), from = st.tracee.read_c_string(from_name);
  ckpt::Checkpoint& f = store_.lookup(from, "merge");
  ckpt::Checkpoint* have = store_.find(into);
  ckpt::Checkpoint result = have ? ckpt::merge(*have, f).merged : f;
  if (trace_) moved_ = {into, f.memory_bytes(), f.runs.size()};
  stamp_and_keep(result, into);
  store_.put(into, std::move(result));
  return 0;
}

}  // namespace

int run_monitor(const MonitorOptions& options, Exchange* exchange) {
  Monitor m(options, exchange);
  Supervisor s(options, m);
  int status = s.run();
  m.finish_trace();
  // --check-races: a job that found races fails, as a sanitizer's does (docs/tickpt.md).
  if (status == 0 && options.check_races && m.race_regions() > 0) {
    util::write_stderr("cape: --check-races found races in " + std::to_string(m.race_regions()) +
                       " parallel region" + (m.race_regions() > 1 ? "s" : "") + " (exit status " +
                       std::to_string(kRaceExitStatus) + ")\n");
    return kRaceExitStatus;
  }
  return status;
}

}  // namespace cape::monitor
