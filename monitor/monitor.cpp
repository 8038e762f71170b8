// The monitor's event loop and the runtime calls it serves. See monitor.h.
#include "monitor/monitor.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/symbols.h"
#include "injector/injector.h"
#include "monitor/crash_report.h"
#include "monitor/interval_set.h"
#include "monitor/remote_syscall.h"
#include "monitor/tracee.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {

void KillSwitch::kill(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!killed_.exchange(true)) reason_ = reason;
  if (pid_ > 0) ::kill(pid_, SIGKILL);
}
std::string KillSwitch::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}
void KillSwitch::attach(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  pid_ = pid;
  if (killed_) ::kill(pid_, SIGKILL);
}
void KillSwitch::detach() {
  std::lock_guard<std::mutex> lock(mu_);
  pid_ = 0;
}

namespace {

std::string hex(uint64_t v) { return ckpt::hex_address(v); }

void write_stderr(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(2, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to report to
    done += static_cast<size_t>(n);
  }
}

// The addresses of `areas`.
IntervalSet spans_of(const std::vector<Area>& areas) {
  std::vector<IntervalSet::Interval> v;
  for (const Area& r : areas) v.emplace_back(r.start, r.end);
  return IntervalSet::of(std::move(v));
}

// Appends the runs of `a` and `b` (disjoint address sets) to `out` in address order.
void append_merged(ckpt::Checkpoint& out, const ckpt::Checkpoint& a, const ckpt::Checkpoint& b) {
  size_t i = 0, j = 0;
  while (i < a.runs.size() || j < b.runs.size()) {
    bool take_a = j == b.runs.size() || (i < a.runs.size() && a.runs[i].address < b.runs[j].address);
    const ckpt::Checkpoint& src = take_a ? a : b;
    const ckpt::Run& r = take_a ? a.runs[i++] : b.runs[j++];
    out.append_from(src, r);
  }
}

// The bytes of `c` inside `keep` (sorted, disjoint), runs cut at its edges.
ckpt::Checkpoint clip_to(const ckpt::Checkpoint& c, const IntervalSet& keep) {
  ckpt::Checkpoint out;
  out.kind = c.kind;
  out.node = c.node;
  out.sequence = c.sequence;
  out.timestamp = c.timestamp;
  out.load_base = c.load_base;
  out.name = c.name;
  out.registers = c.registers;
  for (const ckpt::Run& r : c.runs)
    for (auto it = keep.first_ending_after(r.address); it != keep.end() && it->first < r.end(); ++it)
      out.append_from(c, r, it->first, it->second);
  return out;
}

// Region numbers live in the upper bits of run timestamps; the lower bits order the
// nodes' values of lastprivate variables inside one region (Def. 4.2: later wins).
constexpr int kRegionShift = 20;
// cape_set_ckpt_model()'s values (runtime/include/cape/cape.h).
constexpr int CAPE_CKPT_DICKPT = 0, CAPE_CKPT_TICKPT = 1;
constexpr uint64_t kMaxOrder = (uint64_t{1} << kRegionShift) - 2;

// "file:line" of a code address, through addr2line (only for reports).
std::string source_line(const std::string& exe, uint64_t address) {
  std::string cmd = "addr2line -e '" + exe + "' " + hex(address) + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return "?";
  char buf[1024];
  if (!std::fgets(buf, sizeof buf, p.get())) return "?";
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty() || s.rfind("??", 0) == 0) return "?";
  auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

bool default_is_fatal(int sig) {
  switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
      return false;
    default:
      return true;
  }
}

uint64_t status_mask(pid_t tid, const char* key) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  size_t klen = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, klen, key) == 0) return std::stoull(line.substr(klen + 1), nullptr, 16);
  return 0;
}

// Will delivering `sig` to `tid` end the process? (Then the crash report is due now,
// while the threads can still be unwound.)
bool delivery_is_fatal(pid_t tid, const siginfo_t& si) {
  int sig = si.si_signo;
  if (!default_is_fatal(sig)) return false;
  uint64_t bit = uint64_t{1} << (sig - 1);
  // A kernel-raised fault that is blocked or ignored is forced to its default action.
  bool forced = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) && si.si_code > 0;
  if (status_mask(tid, "SigCgt:") & bit) return forced && (status_mask(tid, "SigBlk:") & bit);
  if (status_mask(tid, "SigIgn:") & bit) return forced;
  return true;
}

std::string sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\0') c = '_';
  return s;
}

class Monitor {
 public:
  Monitor(const MonitorOptions& o, Exchange* ex) : opt_(o), ex_(ex) {
    rank_ = ex ? ex->rank() : o.node_rank;
    size_ = ex ? ex->size() : 1;
    for (const auto& [name, file] : o.loads) {
      try {
        ckpt::Checkpoint c = ckpt::read_file(file);
        c.name = name;
        store_[name] = std::move(c);
      } catch (const ckpt::Error& e) {
        throw UserError("--load " + name + "=" + file + ": " + e.what());
      }
    }
    if (!o.keep_checkpoints_dir.empty()) {
      ::mkdir(o.keep_checkpoints_dir.c_str(), 0755);
      struct stat st;
      if (::stat(o.keep_checkpoints_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw UserError("--keep-checkpoints: " + o.keep_checkpoints_dir + " is not a directory");
    }
    if (o.argv.empty()) throw UserError("no program to run");
    check_races_ = o.check_races;
  }

  int run();

 private:
  void launch();
  int loop();
  void on_signal_stop(pid_t tid, int sig);
  void on_event_stop(pid_t tid, int event);
  void serve(pid_t tid, user_regs_struct regs);
  long dispatch(pid_t tid, int op, uint64_t a1, uint64_t a2, uint64_t boundary);
  void op_start(const StoppedThread& st, uint64_t boundary);
  void op_stop(const StoppedThread& st);
  void op_create(const StoppedThread& st, const std::string& name, uint64_t boundary);
  void op_inject(const StoppedThread& st, const std::string& name, uint64_t boundary);
  void keep(const ckpt::Checkpoint& c);
  ckpt::Checkpoint& lookup(const std::string& name, const char* call);
  void stamp(ckpt::Checkpoint& c, const std::string& name);
  void kill_and_reap();
  void resume(pid_t tid, int sig);
  int finish(const WaitStatus& ws);

  const MonitorOptions& opt_;
  Exchange* ex_;
  int rank_ = 0, size_ = 1;
  pid_t pid_ = 0;
  std::unique_ptr<Tracee> tracee_;
  std::string exe_;
  uint64_t gadget_ = 0;
  uint64_t tls_ = 0;  // the main thread's fs_base
  uint64_t tls_low_ = 0;  // lowest static TLS block in use (0 = unknown)
  void find_tls_low();
  std::set<pid_t> threads_, awaiting_first_stop_;
  std::unique_ptr<DirtyTracker> tracker_;
  bool tracking_ = false;
  std::vector<Area> start_areas_;
  std::map<uint64_t, std::vector<uint8_t>> extra_;  // pages outside start()'s set, at last create
  uint64_t region_ = 0;    // start() calls so far: the timestamp of the region's runs
  uint64_t sequence_ = 0;  // checkpoints made (created or merged) so far
  std::map<std::string, ckpt::Checkpoint> store_;
  bool reported_ = false;

  // Data sharing (002_2c61c2cb27f62a9a.txt Sect. 4; docs/tickpt.md).
  enum class Attr { shared, priv, firstprivate, lastprivate, copyin, copyprivate, threadprivate, reduction };
  struct Var {
    uint64_t addr = 0, size = 0;
    Attr attr = Attr::shared;
    ckpt::Reduction red;
    std::vector<uint8_t> saved;  // reduction: the original value; private: the value to restore
  };
  static bool is_private(Attr a) { return a == Attr::priv || a == Attr::firstprivate || a == Attr::threadprivate; }
  // copyin: the master's copy travels into the region (in its checkpoints, "before"), the
  // nodes' copies never come back (threadprivate): private for results and conflicts.
  static bool is_region_private(Attr a) { return is_private(a) || a == Attr::copyin; }
  void op_attr(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red = {});
  IntervalSet ranges(bool (*pred)(Attr)) const;
  IntervalSet dynamic_memory(const std::vector<Area>& areas) const;
  IntervalSet region_private(uint64_t boundary) const;
  IntervalSet tickpt_cover(const std::vector<Area>& areas) const;
  bool table_applies(uint64_t checkpoint_timestamp) const {
    return vars_region_ != 0 && (checkpoint_timestamp >> kRegionShift) == vars_region_;
  }
  void report_races(const std::vector<ckpt::Conflict>& races, int from, const std::string& name);
  std::vector<ckpt::Conflict> possible_races(const std::vector<ckpt::Conflict>& conflicts);

  std::vector<Var> next_vars_;      // clause calls since the last start()
  bool next_default_none_ = false;
  std::vector<Var> threadprivate_;  // program-wide (Fig. 6)
  std::vector<Var> vars_;           // the region's table: from its start() to the next start()
  bool default_none_ = false;
  uint64_t vars_region_ = 0;        // the region vars_ belongs to (0 = none yet)
  int model_ = CAPE_CKPT_DICKPT;
  int64_t order_ = -1;              // cape_set_order(); -1 = this node's rank
  bool check_races_ = false;
  // The master's DATA-0 of the pages it wrote in the region (their first original), the
  // base of wait_for()'s three-way merge; other pages still hold DATA-0 in its memory.
  std::map<uint64_t, std::vector<uint8_t>> base_pages_;
  void read_base(uint64_t address, std::span<uint8_t> out) const;
  uint64_t start_pc_ = 0;           // return address of the region's start() call
  std::unique_ptr<ckpt::SymbolTable> symbols_;
  std::map<uint64_t, std::string> sites_;  // start() return address -> "file:line"
  const ckpt::SymbolTable& symbols();
  std::string start_site();
};

void Monitor::launch() {
  std::vector<char*> argv;
  for (const std::string& a : opt_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  if (opt_.tracker == TrackerKind::mprotect && opt_.pin_for_sync_tracker) {
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) fail_errno("sched_setaffinity");
  }
  pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (opt_.stdin_fd >= 0) ::dup2(opt_.stdin_fd, 0);
    if (opt_.stdout_fd >= 0) ::dup2(opt_.stdout_fd, 1);
    if (opt_.stderr_fd >= 0) ::dup2(opt_.stderr_fd, 2);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::personality(ADDR_NO_RANDOMIZE);     // the same addresses on every node
    ::prctl(PR_SET_DUMPABLE, 1);          // launchers may have cleared it (KERNEL-FACTS.md)
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
    ::raise(SIGSTOP);
    ::execvp(argv[0], argv.data());
    int e = errno;
    const char* msg = std::strerror(e);
    const char* parts[] = {"cape: cannot run ", argv[0], ": ", msg, "\n"};
    for (const char* p : parts)
      if (::write(2, p, std::strlen(p)) < 0) break;
    _exit(127);
  }
  pid_ = pid;
  if (opt_.kill_switch) opt_.kill_switch->attach(pid);
  int raw = 0;
  while (::waitpid(pid, &raw, __WALL) < 0)
    if (errno != EINTR) fail_errno("waitpid (starting the program)");
  WaitStatus ws{raw};
  if (opt_.kill_switch && opt_.kill_switch->killed())  // pulled before the start: say why
    throw UserError(opt_.kill_switch->reason());
  if (ws.kind() != WaitStatus::signal_stop || ws.signal() != SIGSTOP)
    throw UserError("the program did not start: " + ws.describe());
  long options = PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC;
  if (::ptrace(PTRACE_SETOPTIONS, pid, nullptr, options) != 0) fail_errno("PTRACE_SETOPTIONS");
  threads_.insert(pid);
  tracee_ = std::make_unique<Tracee>(pid);
  tracker_ = make_tracker(opt_.tracker, pid, opt_.tracker_options);
  resume(pid, 0);
}

void Monitor::resume(pid_t tid, int sig) {
  if (::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig))) != 0) {
    if (errno == ESRCH) return;  // killed meanwhile (SIGKILL): its exit status comes next
    fail_errno("PTRACE_CONT");
  }
}

int Monitor::run() {
  try {
    launch();
    int status = loop();
    if (opt_.kill_switch) opt_.kill_switch->detach();
    if (opt_.kill_switch && opt_.kill_switch->killed()) {
      write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
      return 1;
    }
    return status;
  } catch (const UserError& e) {
    kill_and_reap();
    write_stderr(std::string("cape: ") + e.what() + "\n");
    return e.status ? e.status : 1;
  } catch (const ckpt::Error& e) {
    kill_and_reap();
    write_stderr(std::string("cape: ") + e.what() + "\n");
    return 1;
  } catch (const TraceeDied& d) {
    // Died in the middle of a remote syscall: SIGKILL from outside (or the kill switch).
    kill_and_reap();
    if (opt_.kill_switch && opt_.kill_switch->killed()) {
      write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
      return 1;
    }
    write_stderr("cape: the program " + d.status.describe() + " while the monitor worked in it\n");
    return 1;
  } catch (const std::exception& e) {
    kill_and_reap();
    // A ptrace call on a program the kill switch has just killed: report why it was killed.
    if (opt_.kill_switch && opt_.kill_switch->killed()) {
      write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
      return 1;
    }
    write_stderr(std::string("cape: monitor error: ") + e.what() + "\n");
    return 1;
  }
}

void Monitor::kill_and_reap() {
  if (opt_.kill_switch) opt_.kill_switch->detach();
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  for (;;) {
    int raw = 0;
    pid_t got = ::waitpid(-1, &raw, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left
    }
    WaitStatus ws{raw};
    if (got == pid_ && (ws.kind() == WaitStatus::exited || ws.kind() == WaitStatus::signaled)) break;
  }
  pid_ = 0;
}

int Monitor::finish(const WaitStatus& ws) {
  if (ex_) ex_->program_exited(ws.raw);
  pid_ = 0;
  if (ws.kind() == WaitStatus::exited) return ws.exit_code();
  if (!reported_ && !(opt_.kill_switch && opt_.kill_switch->killed()))
    write_stderr("cape: the program was " + ws.describe() + "\n");
  return ws.shell_code();
}

int Monitor::loop() {
  for (;;) {
    int raw = 0;
    pid_t tid = ::waitpid(-1, &raw, __WALL);
    if (tid < 0) {
      if (errno == EINTR) continue;
      fail_errno("waitpid");
    }
    WaitStatus ws{raw};
    switch (ws.kind()) {
      case WaitStatus::exited:
      case WaitStatus::signaled:
        threads_.erase(tid);
        awaiting_first_stop_.erase(tid);
        if (tid == pid_) return finish(ws);
        break;
      case WaitStatus::event_stop:
        on_event_stop(tid, ws.event());
        break;
      case WaitStatus::signal_stop:
        on_signal_stop(tid, ws.signal());
        break;
      default:
        break;
    }
  }
}

void Monitor::on_event_stop(pid_t tid, int event) {
  if (event == PTRACE_EVENT_CLONE) {
    unsigned long child = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child) != 0) fail_errno("PTRACE_GETEVENTMSG");
    pid_t c = static_cast<pid_t>(child);
    if (!threads_.count(c)) {
      threads_.insert(c);
      awaiting_first_stop_.insert(c);
    }
    CAPE_LOG_AT(debug, "monitor") << "thread " << c << " started";
  } else if (event == PTRACE_EVENT_EXEC) {
    // The program replaced itself: whatever was tracked belongs to a gone image.
    tracking_ = false;
    tracker_ = make_tracker(opt_.tracker, pid_, opt_.tracker_options);
    tracee_ = std::make_unique<Tracee>(pid_);  // /proc/PID/mem of the old image writes nothing
    exe_.clear();
  }
  resume(tid, 0);
}

void Monitor::on_signal_stop(pid_t tid, int sig) {
  siginfo_t si{};
  if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0) {
    if (errno == EINVAL) {  // a group-stop (SIGSTOP/SIGTSTP to the process): let it go on
      resume(tid, 0);
      return;
    }
    if (errno == ESRCH) return;
    fail_errno("PTRACE_GETSIGINFO");
  }
  if (sig == SIGSTOP) {
    if (!threads_.count(tid)) {  // a new thread's first stop, before its parent's clone event
      threads_.insert(tid);
      resume(tid, 0);
      return;
    }
    if (awaiting_first_stop_.erase(tid)) {
      resume(tid, 0);
      return;
    }
  }
  threads_.insert(tid);
  CAPE_LOG_AT(debug, "monitor") << "thread " << tid << " signal " << sig << " code " << si.si_code
                                << " addr " << si.si_addr;
  if (sig == SIGTRAP && si.si_code == SI_KERNEL) {
    user_regs_struct regs = Tracee::get_regs(tid);
    if ((regs.rax & CAPE_TRAP_MAGIC_MASK) == CAPE_TRAP_MAGIC) {
      serve(tid, regs);
      return;
    }
  }
  StoppedThread st{*tracee_, tid, gadget_};
  if (sig == SIGSEGV && tracking_ && tracker_->on_fault(st, si)) {
    resume(tid, 0);
    return;
  }
  if (delivery_is_fatal(tid, si) && sig == SIGPIPE) {
    // A reader that went away (`cape run ... | head`) is no crash: quiet, like a shell.
    reported_ = true;
    resume(tid, sig);
    return;
  }
  if (delivery_is_fatal(tid, si)) {
    // Stop the other threads so that every stack can be unwound, then let the signal kill.
    std::vector<pid_t> others;
    for (pid_t t : threads_) {
      if (t == tid) continue;
      if (::syscall(SYS_tgkill, pid_, t, SIGSTOP) != 0) continue;
      int raw = 0;
      if (::waitpid(t, &raw, __WALL) == t && WIFSTOPPED(raw)) others.push_back(t);
    }
    write_stderr(crash_report(pid_, tid, si, others));
    reported_ = true;
    resume(tid, sig);
    return;
  }
  if (tracking_ && gadget_) {
    // A handler will run: the kernel writes the signal frame below the stack pointer, which
    // a read-only stack page would turn into a forced SIGSEGV. Open those pages first.
    user_regs_struct regs = Tracee::get_regs(tid);
    uint64_t sp = regs.rsp;
    tracker_->before_write(st, sp > 32768 ? sp - 32768 : 0, sp);
  }
  resume(tid, sig);
}

void Monitor::serve(pid_t tid, user_regs_struct regs) {
  int op = static_cast<int>(regs.rax & 0xff);
  gadget_ = regs.rcx;
  if (tid == pid_ && tls_ != regs.fs_base) {
    tls_ = regs.fs_base;
    find_tls_low();
  }
  long result = dispatch(tid, op, regs.rdi, regs.rsi, regs.rdx);
  regs.rax = static_cast<unsigned long long>(result);
  Tracee::set_regs(tid, regs);
  resume(tid, 0);
}

// x86_64 glibc: fs_base points at the TCB, whose second word is the DTV; dtv[-1] holds its
// length, dtv[i] (16 bytes each) the address of module i's TLS block. The static blocks lie
// just below fs_base; the lowest one in use bounds what the kernel-touched TLS pages hold.
void Monitor::find_tls_low() {
  tls_low_ = 0;
  auto word = [&](uint64_t a, uint64_t& v) {
    std::span<uint8_t> b(reinterpret_cast<uint8_t*>(&v), 8);
    return tracee_->read_bytes_fallible(a, b) == 8;
  };
  uint64_t dtv = 0, len = 0;
  if (!word(tls_ + 8, dtv) || dtv < 16 || !word(dtv - 16, len)) return;
  uint64_t low = tls_;
  for (uint64_t i = 1; i <= std::min<uint64_t>(len, 256); i++) {
    uint64_t block = 0;
    if (!word(dtv + 16 * i, block)) return;
    if (block != 0 && block != ~uint64_t{0} && block < tls_ && tls_ - block < (uint64_t{1} << 20))
      low = std::min(low, block);
  }
  if (low < tls_) tls_low_ = low;
}

ckpt::Checkpoint& Monitor::lookup(const std::string& name, const char* call) {
  auto it = store_.find(name);
  if (it == store_.end())
    throw UserError(std::string(call) + "(\"" + name + "\"): no checkpoint of that name on node " +
                    std::to_string(rank_));
  return it->second;
}

void Monitor::stamp(ckpt::Checkpoint& c, const std::string& name) {
  c.node = static_cast<uint32_t>(rank_);
  c.sequence = ++sequence_;
  c.name = name;
  if (!exe_.empty()) c.load_base = load_base(read_maps(pid_), exe_);
}

void Monitor::keep(const ckpt::Checkpoint& c) {
  if (opt_.keep_checkpoints_dir.empty()) return;
  std::string path = opt_.keep_checkpoints_dir + "/" + std::to_string(c.node) + "." +
                     std::to_string(c.sequence) + "." + sanitize(c.name) + ".dickpt";
  ckpt::write_file(c, path);
}

long Monitor::dispatch(pid_t tid, int op, uint64_t a1, uint64_t a2, uint64_t boundary) {
  StoppedThread st{*tracee_, tid, gadget_};
  auto name = [&](uint64_t p) { return tracee_->read_c_string(p); };
  if (exe_.empty()) {
    char buf[4096];
    std::string link = "/proc/" + std::to_string(pid_) + "/exe";
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    if (n < 0) fail_errno("readlink " + link);
    exe_.assign(buf, static_cast<size_t>(n));
  }
  switch (op) {
    case CAPE_OP_HELLO: return 0;
    case CAPE_OP_MASTER: return rank_ == 0;
    case CAPE_OP_NODE_ID: return rank_;
    case CAPE_OP_NUM_NODES: return size_;
    case CAPE_OP_LAST_PARALLEL: return 0;  // not knowable here; see docs/monitor.md
    case CAPE_OP_START: op_start(st, boundary); return 0;
    case CAPE_OP_SET_SHARED: op_attr(Attr::shared, a1, a2); return 0;
    case CAPE_OP_SET_PRIVATE: op_attr(Attr::priv, a1, a2); return 0;
    case CAPE_OP_SET_FIRSTPRIVATE: op_attr(Attr::firstprivate, a1, a2); return 0;
    case CAPE_OP_SET_LASTPRIVATE: op_attr(Attr::lastprivate, a1, a2); return 0;
    case CAPE_OP_SET_COPYIN: op_attr(Attr::copyin, a1, a2); return 0;
    case CAPE_OP_SET_COPYPRIVATE: op_attr(Attr::copyprivate, a1, a2); return 0;
    case CAPE_OP_SET_THREADPRIVATE: op_attr(Attr::threadprivate, a1, a2); return 0;
    case CAPE_OP_SET_DEFAULT_NONE: next_default_none_ = true; return 0;
    case CAPE_OP_REDUCTION: {
      ckpt::Reduction r{static_cast<ckpt::ReduceOp>((a2 >> CAPE_RED_SIZE_BITS) & 0xff),
                        static_cast<ckpt::ElemType>((a2 >> (CAPE_RED_SIZE_BITS + 8)) & 0xff)};
      uint64_t size = a2 & ((uint64_t{1} << CAPE_RED_SIZE_BITS) - 1);
      if (r.op == ckpt::ReduceOp::none || static_cast<int>(r.op) > static_cast<int>(ckpt::ReduceOp::max) ||
          r.type == ckpt::ElemType::none || static_cast<int>(r.type) > static_cast<int>(ckpt::ElemType::f64))
        throw UserError("cape_reduction(" + hex(a1) + "): unknown operator or type (" +
                        std::to_string(static_cast<int>(r.op)) + ", " + std::to_string(static_cast<int>(r.type)) + ")");
      try {
        ckpt::check_reduction(r, size);
      } catch (const ckpt::Error& e) {
        throw UserError("cape_reduction(" + hex(a1) + ", " + std::to_string(size) + "): " + e.what());
      }
      op_attr(Attr::reduction, a1, size, r);
      return 0;
    }
    case CAPE_OP_SET_CKPT_MODEL:
      if (a1 != CAPE_CKPT_DICKPT && a1 != CAPE_CKPT_TICKPT)
        throw UserError("cape_set_ckpt_model(" + std::to_string(a1) + "): not CAPE_CKPT_DICKPT or CAPE_CKPT_TICKPT");
      model_ = static_cast<int>(a1);
      return 0;
    case CAPE_OP_SET_ORDER: {
      int64_t o = static_cast<int64_t>(a1);
      if (o < 0 || static_cast<uint64_t>(o) > kMaxOrder)
        throw UserError("cape_set_order(" + std::to_string(o) + "): out of range 0.." + std::to_string(kMaxOrder));
      order_ = o;
      return 0;
    }
    case CAPE_OP_STOP: op_stop(st); return 0;
    case CAPE_OP_CREATE: op_create(st, name(a1), boundary); return 0;
    case CAPE_OP_INJECT: op_inject(st, name(a1), boundary); return 0;
    case CAPE_OP_SEND: {
      std::string n = name(a1);
      int node = static_cast<int>(static_cast<int64_t>(a2));
      if (!ex_) throw UserError("send(\"" + n + "\", " + std::to_string(node) +
                                "): this program runs alone under `cape monitor`; use `cape run -n N`");
      if (node < 0 || node >= size_ || node == rank_)
        throw UserError("send(\"" + n + "\", " + std::to_string(node) + "): no such other node (" +
                        std::to_string(size_) + " nodes)");
      ex_->send(lookup(n, "send"), node);
      return 0;
    }
    case CAPE_OP_RECEIVE: {
      std::string n = name(a1);
      if (!ex_) throw UserError("receive(\"" + n + "\"): this program runs alone under `cape monitor`;"
                                " use `cape run -n N`, or give it with --load " + n + "=FILE");
      ckpt::Checkpoint c = ex_->receive(n);
      c.name = n;
      store_[n] = std::move(c);
      return 0;
    }
    case CAPE_OP_BROADCAST: {
      std::string n = name(a1);
      ckpt::Checkpoint& c = lookup(n, "broadcast");
      if (ex_ && size_ > 1) ex_->broadcast(c);
      return 0;
    }
    case CAPE_OP_WAIT_FOR: {
      // Receive every slave's part and merge them (004_9e6a480351e099dd.txt 3.2).
      std::string n = name(a1);
      if (ex_ && size_ > 1) {
        ex_->wait_for(n, [&](ckpt::Checkpoint&& part, int from) {
          auto it = store_.find(n);
          if (it == store_.end()) {
            part.name = n;
            store_[n] = std::move(part);
            return;
          }
          ckpt::MergeOptions mo;
          // Three-way merge against the master's DATA-0: runs carry the unchanged bytes
          // between changed words, so two nodes writing neighbouring elements overlap; the
          // side that still holds the base value yields (no lost update, no false race).
          mo.read_base = [&](uint64_t address, std::span<uint8_t> out) { read_base(address, out); };
          ckpt::MergeResult m = ckpt::merge(it->second, part, mo);
          std::vector<ckpt::Conflict> races = possible_races(m.conflicts);
          if (check_races_)
            report_races(races, from, n);
          else if (!races.empty())
            CAPE_LOG_AT(warn, "monitor") << "wait_for(\"" << n << "\"): " << races.size()
                                         << " ranges written differently by node " << from
                                         << " and another node, first at " << hex(races[0].address)
                                         << " (run with --check-races to name them)";
          it->second = std::move(m.merged);
        });
      }
      auto it = store_.find(n);
      if (it == store_.end()) {
        ckpt::Checkpoint empty;
        store_[n] = std::move(empty);
        it = store_.find(n);
      }
      stamp(it->second, n);
      keep(it->second);
      return 0;
    }
    case CAPE_OP_MERGE: {
      std::string into = name(a1), from = name(a2);
      ckpt::Checkpoint& f = lookup(from, "merge");
      auto it = store_.find(into);
      ckpt::Checkpoint result = it == store_.end() ? f : ckpt::merge(it->second, f).merged;
      stamp(result, into);
      keep(result);
      store_[into] = std::move(result);
      return 0;
    }
    default:
      throw UserError("unknown runtime call " + std::to_string(op) +
                      " (libcape and cape come from different versions?)");
  }
}

void Monitor::op_attr(Attr a, uint64_t addr, uint64_t size, ckpt::Reduction red) {
  if (tracking_)
    throw UserError("data-sharing call for " + hex(addr) + " inside start() ... stop(): clause calls "
                    "come before the region's cape_start() (002 Fig. 7)");
  if (size == 0 || addr + size < addr) throw UserError("data-sharing call for " + hex(addr) + ": bad size " + std::to_string(size));
  std::vector<Var>& list = a == Attr::threadprivate ? threadprivate_ : next_vars_;
  for (Var& v : list)
    if (v.addr < addr + size && addr < v.addr + v.size) {
      if (v.addr == addr && v.size == size) {  // a later clause on the same variable wins
        v.attr = a;
        v.red = red;
        return;
      }
      throw UserError("data-sharing call for " + hex(addr) + " (" + std::to_string(size) +
                      " bytes) overlaps another variable at " + hex(v.addr));
    }
  list.push_back(Var{addr, size, a, red, {}});
}

IntervalSet Monitor::ranges(bool (*pred)(Attr)) const {
  std::vector<IntervalSet::Interval> v;
  for (const Var& x : vars_)
    if (pred(x.attr)) v.emplace_back(x.addr, x.addr + x.size);
  return IntervalSet::of(std::move(v));
}

// Objects with dynamic storage duration are shared (002 Sect. 3.1, 4.1 rule 2): the heap and
// anonymous private mappings (malloc's large blocks, the program's own mmaps).
IntervalSet Monitor::dynamic_memory(const std::vector<Area>& areas) const {
  std::vector<IntervalSet::Interval> v;
  for (const Area& r : areas)
    if (r.kind == Area::heap || r.kind == Area::anon) v.emplace_back(r.start, r.end);
  return IntervalSet::of(std::move(v));
}

// What is private in the current region: private/firstprivate/threadprivate/copyin, and
// under default(none) everything but the registered shared data and dynamic memory.
IntervalSet Monitor::region_private(uint64_t boundary) const {
  IntervalSet drop = ranges(&Monitor::is_region_private);
  if (!default_none_) return drop;
  IntervalSet travel = ranges([](Attr a) { return !is_region_private(a); })
                           .unite(dynamic_memory(tracked_set(read_maps(pid_), exe_, boundary, tls_, tls_low_)));
  return drop.unite(IntervalSet::everything().minus(travel));
}

void Monitor::read_base(uint64_t address, std::span<uint8_t> out) const {
  size_t done = 0;
  while (done < out.size()) {
    uint64_t a = address + done, page = page_down(a);
    size_t n = std::min<uint64_t>(out.size() - done, page + kPageSize - a);
    std::span<uint8_t> part = out.subspan(done, n);
    auto it = base_pages_.find(page);
    if (it != base_pages_.end() && it->second.size() == kPageSize)
      std::memcpy(part.data(), it->second.data() + (a - page), n);
    else if (tracee_->read_bytes_fallible(a, part) != n)
      std::fill(part.begin(), part.end(), uint8_t{0});
    done += n;
  }
}

// TICKPT compares only shared data (002 Sect. 4.3): the pages of the registered shared and
// copyprivate variables and dynamic memory. (Reduction, lastprivate and copyin values are
// read whole at create(); private data is never compared.)
IntervalSet Monitor::tickpt_cover(const std::vector<Area>& areas) const {
  std::vector<IntervalSet::Interval> v;
  for (const Var& x : vars_)
    if (x.attr == Attr::shared || x.attr == Attr::copyprivate) v.emplace_back(page_down(x.addr), page_up(x.addr + x.size));
  return IntervalSet::of(std::move(v)).unite(dynamic_memory(areas));
}

// The parts of `areas` inside `cover` (kind and protection kept).
std::vector<Area> restrict_areas(const std::vector<Area>& areas, const IntervalSet& cover) {
  std::vector<Area> out;
  for (const Area& r : areas)
    for (auto [s, e] : cover) {
      uint64_t lo = std::max(r.start, s), hi = std::min(r.end, e);
      if (lo >= hi) continue;
      Area x = r;
      x.start = lo;
      x.end = hi;
      out.push_back(x);
    }
  return out;
}

void Monitor::op_start(const StoppedThread& st, uint64_t boundary) {
  if (tracking_) op_stop(st);
  // The region's attribute table: this region's clauses, then threadprivate variables no
  // clause names (copyin makes a threadprivate variable travel for one region).
  vars_ = std::move(next_vars_);
  next_vars_.clear();
  for (const Var& t : threadprivate_) {
    bool named = false;
    for (const Var& v : vars_) named = named || (v.addr < t.addr + t.size && t.addr < v.addr + v.size);
    if (!named) vars_.push_back(t);
  }
  std::sort(vars_.begin(), vars_.end(), [](const Var& x, const Var& y) { return x.addr < y.addr; });
  default_none_ = next_default_none_;
  next_default_none_ = false;
  vars_region_ = region_ + 1;
  // Before tracking starts: keep reduction variables' originals and give them the
  // operator's identity; keep private copies' values to restore at stop().
  for (Var& v : vars_) {
    if (v.attr != Attr::reduction && v.attr != Attr::priv && v.attr != Attr::firstprivate) continue;
    v.saved.assign(v.size, 0);
    tracee_->read_bytes(v.addr, v.saved);
    if (v.attr == Attr::reduction) tracee_->write_bytes(v.addr, ckpt::reduction_identity(v.red, v.size));
  }
  start_pc_ = 0;
  if (boundary >= 8) {
    uint64_t ra = 0;
    std::span<uint8_t> b(reinterpret_cast<uint8_t*>(&ra), 8);
    if (tracee_->read_bytes_fallible(boundary - 8, b) == 8) start_pc_ = ra;
  }
  start_areas_ = tracked_set(read_maps(pid_), exe_, 0, tls_, tls_low_);
  // TICKPT: DATA-0 is a copy of the shared data only (002 Sect. 4.3).
  if (model_ == CAPE_CKPT_TICKPT) start_areas_ = restrict_areas(start_areas_, tickpt_cover(start_areas_));
  tracker_->start(st, start_areas_);
  tracking_ = true;
  ++region_;
  extra_.clear();
  base_pages_.clear();
  // Names the region in the job's failure messages (docs/net.md).
  if (ex_) ex_->set_region("parallel region " + std::to_string(region_) + " (start() at " + start_site() + ")");
  CAPE_LOG_AT(debug, "monitor") << "start(): " << start_areas_.size() << " areas, tracker "
                                << to_string(tracker_->kind()) << ", " << vars_.size() << " attributed variables, "
                                << (model_ == CAPE_CKPT_TICKPT ? "TICKPT" : "DICKPT");
}

void Monitor::op_stop(const StoppedThread& st) {
  if (!tracking_) return;
  tracker_->stop(st);
  tracking_ = false;
  extra_.clear();
  start_areas_.clear();
  // Private copies end with the region: the original variable keeps the value it had
  // (OpenMP), on every node, so all nodes hold the same memory again.
  if (vars_region_ == region_)
    for (const Var& v : vars_)
      if ((v.attr == Attr::priv || v.attr == Attr::firstprivate) && !v.saved.empty())
        tracee_->write_bytes(v.addr, v.saved);
}

const ckpt::SymbolTable& Monitor::symbols() {
  if (!symbols_) {
    try {
      symbols_ = std::make_unique<ckpt::SymbolTable>(ckpt::SymbolTable::load(exe_, load_base(read_maps(pid_), exe_)));
    } catch (const ckpt::Error&) {
      symbols_ = std::make_unique<ckpt::SymbolTable>();
    }
  }
  return *symbols_;
}

// "file:line" of the current region's start() call (addr2line, once per call site).
std::string Monitor::start_site() {
  if (!start_pc_) return "?";
  auto it = sites_.find(start_pc_);
  if (it != sites_.end()) return it->second;
  uint64_t base = load_base(read_maps(pid_), exe_);
  std::string where = source_line(exe_, (symbols().pie() ? start_pc_ - base : start_pc_) - 1);
  if (where == "?") {
    // No debug information (built without -g): the function and offset still say where.
    if (const ckpt::Symbol* f = symbols().find_function(start_pc_ - 1))
      where = f->name + "+" + hex(start_pc_ - f->address);
  }
  sites_.emplace(start_pc_, where);
  return where;
}

// The conflicts of a merge that can be races: not private copies (they differ by design),
// and under DICKPT not the unregistered words of the main stack. DICKPT sends every written
// stack word, including the locals of the region itself and the compiler's spills (private
// in OpenMP, 002 Sect. 3.1), which no clause call can name before start(): on the stack only
// registered shared variables count. TICKPT sends no stack data but the registered.
std::vector<ckpt::Conflict> Monitor::possible_races(const std::vector<ckpt::Conflict>& conflicts) {
  if (conflicts.empty()) return {};
  IntervalSet priv = region_private(0);
  std::vector<IntervalSet::Interval> stack_v;
  for (const Area& r : tracked_set(read_maps(pid_), exe_, 0, tls_, tls_low_))
    if (r.kind == Area::stack) stack_v.emplace_back(r.start, r.end);
  IntervalSet stack = IntervalSet::of(std::move(stack_v));
  IntervalSet registered = ranges([](Attr a) { return !is_region_private(a); });
  std::vector<ckpt::Conflict> out;
  for (const ckpt::Conflict& c : conflicts) {
    if (priv.overlaps(c.address, c.address + c.length)) continue;
    if (model_ == CAPE_CKPT_DICKPT && stack.overlaps(c.address, c.address + c.length) &&
        !registered.overlaps(c.address, c.address + c.length))
      continue;
    out.push_back(c);
  }
  return out;
}

void Monitor::report_races(const std::vector<ckpt::Conflict>& races, int from, const std::string& name) {
  if (races.empty()) return;
  symbols();
  std::string where = start_site();
  std::vector<Area> areas = tracked_set(read_maps(pid_), exe_, 0, tls_, tls_low_);
  std::set<std::string> said;
  for (const ckpt::Conflict& c : races) {
    const ckpt::Symbol* sym = symbols_->find(c.address);
    std::string what;
    if (sym) {
      what = sym->name;
      if (sym->size > 8 || c.address != sym->address) {
        what += '+';  // (not `"+" + to_string()`: gcc 12 -O3 warns -Wrestrict, breaking make bench)
        what += std::to_string(c.address - sym->address);
      }
    } else {
      const char* kind = "memory";
      for (const Area& r : areas)
        if (r.contains(c.address)) kind = to_string(r.kind);
      what = std::string(kind) + " " + hex(c.address);
    }
    if (!said.insert(sym ? sym->name : what).second) continue;  // one line per variable
    write_stderr("cape: race: region " + std::to_string(region_) + " (start() at " + where + "): `" + what +
                 "` (" + hex(c.address) + ", " + std::to_string(c.length) + " bytes) written with different values "
                 "by node " + std::to_string(from) + " and another node, without a reduction (checkpoint \"" +
                 name + "\")\n");
  }
}

void Monitor::op_create(const StoppedThread& st, const std::string& name, uint64_t boundary) {
  if (!tracking_) throw UserError("create(\"" + name + "\") outside start() ... stop()");
  // What may be captured now: the tracked set with the runtime's frames cut off.
  std::vector<Area> areas_now = tracked_set(read_maps(pid_), exe_, boundary, tls_, tls_low_);
  if (model_ == CAPE_CKPT_TICKPT) areas_now = restrict_areas(areas_now, tickpt_cover(areas_now));
  IntervalSet now = spans_of(areas_now);
  for (auto [s, e] : now) CAPE_LOG_AT(debug, "monitor") << "tracked " << hex(s) << "-" << hex(e);
  const uint64_t ts = region_ << kRegionShift;

  ckpt::Checkpoint tracked;  // pages of start()'s set, from the tracker
  ckpt::Differ tracked_diff(tracked, ts);
  tracker_->collect(st, [&](uint64_t page, std::span<const uint8_t> orig, std::span<const uint8_t> cur) {
    auto [lo, hi] = now.clip(page, page + kPageSize);
    if (lo == hi) return;
    // (Only a master with slaves merges against them: alone, no copy per page.)
    if (rank_ == 0 && size_ > 1 && orig.size() == kPageSize) base_pages_.try_emplace(page, orig.begin(), orig.end());
    tracked_diff.add(lo, orig.subspan(lo - page, hi - lo), cur.subspan(lo - page, hi - lo));
  });

  // Memory that start() did not see (mapped or grown since): against zeros the first time,
  // then against what the previous create() saw.
  tracked_diff.finish();
  ckpt::Checkpoint fresh;
  ckpt::Differ fresh_diff(fresh, ts);
  std::vector<uint8_t> cur(kPageSize);
  for (auto [s, e] : now.minus(spans_of(start_areas_))) {
    for (uint64_t page = page_down(s); page < e; page += kPageSize) {
      if (tracee_->read_bytes_fallible(page, cur) != kPageSize) continue;
      uint64_t lo = std::max(page, s), hi = std::min(page + kPageSize, e);
      std::span<const uint8_t> c(cur.data() + (lo - page), hi - lo);
      auto it = extra_.find(page);
      if (it == extra_.end()) {
        fresh_diff.add_against_zero(lo, c);
        if (rank_ == 0 && size_ > 1) base_pages_.try_emplace(page, kPageSize, uint8_t{0});  // new memory: zeros
        extra_.emplace(page, cur);
      } else {
        fresh_diff.add(lo, std::span<const uint8_t>(it->second).subspan(lo - page, hi - lo), c);
        it->second = cur;
      }
    }
  }

  fresh_diff.finish();
  ckpt::Checkpoint all;
  append_merged(all, tracked, fresh);

  // Data sharing (002 Sect. 4.3). Reduction and lastprivate variables are saved whatever
  // changed: reductions with their operator, lastprivate with a timestamp that orders the
  // nodes' shares (Def. 4.2: the sequentially last one wins); the master also saves its
  // copyin variables (so "before" carries them to the slaves). TICKPT keeps only shared
  // data (registered shared/copyprivate and dynamic memory, minus private); DICKPT keeps
  // every write, as CAPE-2 did, and inject() leaves private data alone.
  IntervalSet forced = ranges([](Attr a) { return a == Attr::reduction || a == Attr::lastprivate; });
  IntervalSet copyin = ranges([](Attr a) { return a == Attr::copyin; });
  IntervalSet travel;
  if (model_ == CAPE_CKPT_TICKPT) {
    IntervalSet shared = ranges([](Attr a) { return a == Attr::shared || a == Attr::copyprivate; });
    travel = shared.unite(dynamic_memory(areas_now))
                 .minus(ranges(&Monitor::is_region_private).unite(forced).unite(copyin));
  } else {
    travel = IntervalSet::everything().minus(rank_ == 0 ? forced.unite(copyin) : forced);
  }
  ckpt::Checkpoint kept = clip_to(all, travel);
  ckpt::Checkpoint saved;
  uint64_t order = order_ >= 0 ? static_cast<uint64_t>(order_) : static_cast<uint64_t>(rank_);
  for (const Var& v : vars_) {
    bool master_copyin = v.attr == Attr::copyin && rank_ == 0;
    if (v.attr != Attr::reduction && v.attr != Attr::lastprivate && !master_copyin) continue;
    std::vector<uint8_t> cur_value(v.size);
    tracee_->read_bytes(v.addr, cur_value);
    if (master_copyin)
      saved.append(v.addr, cur_value, ts);
    else if (v.attr == Attr::reduction)
      saved.append(v.addr, cur_value, ts, v.red);
    else
      saved.append(v.addr, cur_value, ts + 1 + std::min(order, kMaxOrder));
  }
  ckpt::Checkpoint out;
  out.kind = ckpt::Kind::delta;
  out.timestamp = ts;
  append_merged(out, kept, saved);
  stamp(out, name);
  CAPE_LOG_AT(debug, "monitor") << "create(\"" << name << "\"): " << out.runs.size() << " runs, "
                                << out.memory_bytes() << " bytes, " << tracker_->pages_visited
                                << " pages visited so far, " << tracker_->faults << " faults";
  keep(out);
  store_[name] = std::move(out);
}

void Monitor::op_inject(const StoppedThread& st, const std::string& name, uint64_t boundary) {
  const ckpt::Checkpoint& c = lookup(name, "inject");
  // Region numbers must agree between nodes (timestamps, 002 Def. 4.2); a master that runs
  // extra regions of its own (a translator's copyin step, a serial start()/stop()) is ahead.
  // A slave takes the region number from what it injects before its start(): the next
  // start() gets the master's number.
  if (!tracking_ && (c.timestamp >> kRegionShift) > region_ + 1) region_ = (c.timestamp >> kRegionShift) - 1;
  std::vector<injector::Range> allowed;
  for (auto [s, e] : spans_of(tracked_set(read_maps(pid_), exe_, boundary, tls_, tls_low_))) allowed.push_back({s, e});
  injector::check_inside(c, allowed, "inject(\"" + name + "\")");  // before writing anything
  if (!table_applies(c.timestamp) || (vars_.empty() && !default_none_)) {
    if (tracking_)
      for (const ckpt::Run& r : c.runs) tracker_->before_write(st, r.address, r.end());
    injector::write_checkpoint(tracee_->pid(), c);
    return;
  }
  // A checkpoint of the region the table belongs to: private data is never overwritten
  // (default(none): nothing but the registered shared variables and dynamic memory), and
  // a reduction variable gets original op merged partial results (restored first), which
  // is OpenMP's result on every node however often it is injected.
  IntervalSet drop = region_private(boundary);
  ckpt::Checkpoint w = clip_to(c, IntervalSet::everything().minus(drop));
  ckpt::Checkpoint resolved;
  resolved.kind = w.kind;
  for (const ckpt::Run& r : w.runs) {
    const Var* var = nullptr;
    if (r.reduction.active())
      for (const Var& v : vars_)
        if (v.attr == Attr::reduction && v.addr == r.address && v.size == r.length && v.red == r.reduction &&
            v.saved.size() == v.size)
          var = &v;
    if (!var) {
      resolved.append_from(w, r);
      continue;
    }
    std::vector<uint8_t> value = var->saved;
    ckpt::reduce(r.reduction, value, w.data(r));
    resolved.append(r.address, value, r.timestamp);
  }
  if (tracking_)
    for (const ckpt::Run& r : resolved.runs) tracker_->before_write(st, r.address, r.end());
  injector::write_checkpoint(tracee_->pid(), resolved);
}

}  // namespace

int run_monitor(const MonitorOptions& options, Exchange* exchange) {
  Monitor m(options, exchange);
  return m.run();
}

}  // namespace cape::monitor
