#include "monitor/supervisor.h"

#include "monitor/cape1_calls.h"
#include "monitor/restart.h"

#include <dirent.h>
#include <sched.h>
#include <elf.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

#include "ckpt/checkpoint.h"
#include "monitor/crash_report.h"
#include "monitor/lazy.h"
#include "monitor/lease_words.h"
#include "monitor/memory_map.h"
#include "monitor/remote_syscall.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"
#include "util/spin.h"

namespace cape::monitor {

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

using util::write_stderr;

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

// A fault the kernel raised at an instruction (not a signal sent): no system call was under way.
bool is_fault(const siginfo_t& si) {
  int sig = si.si_signo;
  return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) && si.si_code > 0;
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

// Is the process being killed (a SIGKILL pending, or already a zombie)? A thread in a
// ptrace-stop cannot vanish otherwise; /proc then shows the dying process, or nothing.
bool being_killed(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  size_t paren = stat.rfind(')');
  char state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  if (state == 'Z' || state == 'X') return true;
  uint64_t kill_bit = uint64_t{1} << (SIGKILL - 1);
  return ((status_mask(pid, "ShdPnd:") | status_mask(pid, "SigPnd:")) & kill_bit) != 0;
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

}  // namespace

void Supervisor::launch() {
  if (opt_.restart) return launch_restarted();
  std::vector<char*> argv;
  for (const std::string& a : opt_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) CPU_ZERO(&allowed);
  // A node per CPU: each stays on its own. More nodes than CPUs: together during calls,
  // floating while they compute (monitor.h).
  if (opt_.pin_for_sync_tracker && opt_.tracker != TrackerKind::full)
    pin_ = opt_.node_count <= CPU_COUNT(&allowed) ? PinMode::always : PinMode::calls;
  if (const char* e = std::getenv("CAPE_PIN")) {
    std::string_view v(e);
    if (v == "0") pin_ = PinMode::none;
    if (v == "1") pin_ = PinMode::always;
    if (v == "calls") pin_ = PinMode::calls;
  }
  if (pin_ == PinMode::calls)
    for (int c = 64; c < CPU_SETSIZE; c++)  // r10 carries CPUs 0-63 only (protocol.h)
      if (CPU_ISSET(c, &allowed)) {
        pin_ = PinMode::always;
        break;
      }
  if (pin_ != PinMode::none) {
    // One CPU of those allowed, chosen by rank: the nodes of a host spread over its CPUs.
    // (It was the CPU the monitor happened to start on: two nodes' programs landed on one
    // vCPU while another was idle, issue 14.)
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = sched_getcpu();
    if (CPU_COUNT(&allowed) > 0) {
      int nth = opt_.node_rank % CPU_COUNT(&allowed);
      // CAPE_LAZY_SLAVE_CPUS=1 (lazy, more nodes than CPUs, calls only): the slaves' calls (their
      // publishing copies) stay off the master's CPU, which its serial chain then has alone.
      if (opt_.sync_lazy && pin_ == PinMode::calls && opt_.node_rank != 0 && CPU_COUNT(&allowed) >= 2 &&
          opt_.node_count > CPU_COUNT(&allowed) && slave_cpus_from_env())
        nth = 1 + (opt_.node_rank - 1) % (CPU_COUNT(&allowed) - 1);
      for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && nth-- == 0) {
          cpu = c;
          break;
        }
    }
    call_cpu_ = cpu < 0 ? 0 : cpu;
    CAPE_LOG_AT(debug, "monitor") << "runtime calls on CPU " << call_cpu_;
    CPU_SET(call_cpu_, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) fail_errno("sched_setaffinity");
    // The node's other threads too (started before: network readers, heartbeats): a frame
    // a reader hands to this thread then wakes no other vCPU (empty region -5 to -10%).
    if (DIR* d = ::opendir("/proc/self/task")) {
      while (dirent* de = ::readdir(d))
        if (de->d_name[0] != '.') ::sched_setaffinity(static_cast<pid_t>(std::atoi(de->d_name)), sizeof set, &set);
      ::closedir(d);
    }
  }
  // With more nodes than CPUs a lazy region's critical path is the master's serial chain (its
  // share, the merge, the lists, its publishing copy) while the slaves' programs compete for
  // its CPU: a slave's program runs at nice +N (CAPE_LAZY_SLAVE_NICE, 0: off). A weight, not
  // SCHED_IDLE: a slave still gets its CPU share whenever the master's chain waits.
  // Off by default: no gain measured under load (docs/monitor.md, "Session 15: the master's serial chain").
  std::optional<int> nice_to;
  if (opt_.sync_lazy && opt_.node_rank != 0 && CPU_COUNT(&allowed) > 0 && opt_.node_count > CPU_COUNT(&allowed))
    if (int by = slave_nice_from_env(); by > 0) {
      errno = 0;
      int now = ::getpriority(PRIO_PROCESS, 0);
      if (errno == 0) nice_to = std::min(19, now + by);
    }
  // The in-process tracker's program changes protections itself at every fault: a
  // notification each would cost more than the maps reads it saves.
  bool maps_signal = opt_.tracker != TrackerKind::inproc && MapsSignal::prepare(server_.needs_mapping_calls() || server_.wants_mapping_calls());
  pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (opt_.stdin_fd >= 0) ::dup2(opt_.stdin_fd, 0);
    if (opt_.stdout_fd >= 0) ::dup2(opt_.stdout_fd, 1);
    if (opt_.stderr_fd >= 0) ::dup2(opt_.stderr_fd, 2);
    // PinMode::calls: the program floats until its first runtime call.
    if (pin_ == PinMode::calls) ::sched_setaffinity(0, sizeof allowed, &allowed);
    if (nice_to) (void)::setpriority(PRIO_PROCESS, 0, *nice_to);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::personality(ADDR_NO_RANDOMIZE);     // the same addresses on every node
    ::prctl(PR_SET_DUMPABLE, 1);          // launchers may have cleared it (KERNEL-FACTS.md)
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
    MapsSignal::install_in_child(maps_signal);  // after PR_SET_DUMPABLE: the monitor takes its listener
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
  if (killed())  // pulled before the start: say why
    throw UserError(opt_.kill_switch->reason());
  if (ws.kind() != WaitStatus::signal_stop || ws.signal() != SIGSTOP)
    throw UserError("the program did not start: " + ws.describe());
  if (nice_to) {  // what the kernel says, not what was asked (tests/lazy/slave_nice_paths.sh)
    errno = 0;
    int got = ::getpriority(PRIO_PROCESS, pid);
    CAPE_LOG_AT(info, "monitor") << "--sync=lazy: the program runs at nice " << (errno ? -100 : got) << " ("
                                 << opt_.node_count << " nodes on " << CPU_COUNT(&allowed)
                                 << " CPUs; CAPE_LAZY_SLAVE_NICE=0: off)";
  }
  MapsSignal::BeforeCall before;
  if (server_.needs_mapping_calls() || server_.wants_mapping_calls())
    before = [this](long nr, const uint64_t(&args)[6]) { server_.before_mapping_call(nr, args); };
  maps_signal_ = MapsSignal::take(pid, maps_signal, std::move(before));
  if (!maps_signal_ && server_.needs_mapping_calls())
    throw UserError("--sync=lazy needs to see the program's mapping calls (a seccomp filter with a listener), "
                    "which could not be installed (the node's log says why); run with --sync=eager");
  long options = PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC;
  if (::ptrace(PTRACE_SETOPTIONS, pid, nullptr, options) != 0) fail_errno("PTRACE_SETOPTIONS");
  threads_.insert(pid);
  tracee_ = std::make_unique<Tracee>(pid);
  server_.new_image(pid);
  resume(pid, 0);
}

// CAPE-1: the program from a complete checkpoint, stopped and traced by us (restart.h).
void Supervisor::launch_restarted() {
  RestartOptions ro;
  ro.command = opt_.argv;
  ro.detach = false;
  ro.stdin_fd = opt_.stdin_fd;
  ro.stdout_fd = opt_.stdout_fd;
  ro.stderr_fd = opt_.stderr_fd;
  ro.die_with_parent = true;
  if (server_.needs_mapping_calls())
    throw UserError("--sync=lazy cannot follow a restarted program's mapping calls; run with --sync=eager");
  pid_t pid = restart_process(*opt_.restart, ro);
  pid_ = pid;
  if (opt_.kill_switch) opt_.kill_switch->attach(pid);
  long options = PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC;
  if (::ptrace(PTRACE_SETOPTIONS, pid, nullptr, options) != 0) fail_errno("PTRACE_SETOPTIONS");
  threads_.insert(pid);
  tracee_ = std::make_unique<Tracee>(pid);
  server_.new_image(pid);
  resume(pid, 0);
}

// Before the new image's first instruction (ld.so reads AT_RANDOM for the stack canary and
// the pointer guard): the auxiliary vector says where the kernel put the 16 bytes.
void Supervisor::set_at_random(const std::array<uint8_t, 16>& bytes) {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/auxv", std::ios::binary);
  uint64_t kv[2];
  while (in.read(reinterpret_cast<char*>(kv), sizeof kv) && kv[0] != AT_NULL)
    if (kv[0] == AT_RANDOM) return tracee_->write_bytes(kv[1], bytes);
  throw UserError("the program's auxiliary vector has no AT_RANDOM");
}

void Supervisor::resume(pid_t tid, int sig) {
  if (!signal_trusted()) maps_may_change();  // with the signal, its count says what changed
  if (::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig))) != 0) {
    if (errno == ESRCH) return;  // killed meanwhile (SIGKILL): its exit status comes next
    fail_errno("PTRACE_CONT");
  }
  if (trap_spin_ns_ > 0) resumed_ns_ = steady_ns();
}

pid_t Supervisor::wait_stop(int* raw) {
  if (trap_spin_ns_ < 0) {
    const char* v = std::getenv("CAPE_TRAP_SPIN_US");
    long us = v ? std::strtol(v, nullptr, 10) : 0;
    trap_spin_ns_ = std::clamp(us, 0L, 1000L) * 1000;
  }
  // A runtime call often follows the last one closely (a critical's entry after the region's
  // start, its exit after a short body): polled for a while, its stop costs no wake-up.
  if (trap_spin_ns_ > 0 && resumed_ns_) {
    const int64_t until = resumed_ns_ + trap_spin_ns_;
    resumed_ns_ = 0;
    while (steady_ns() < until && util::cpu_to_spare()) {  // (not while another task wants the CPU)
      pid_t got = ::waitpid(-1, raw, __WALL | WNOHANG);
      if (got != 0) {
        if (got > 0) stops_spun_++;
        return got;
      }
      ::sched_yield();  // the program may be runnable on this CPU
    }
    stops_slept_++;
  }
  return ::waitpid(-1, raw, __WALL);
}

int Supervisor::run() {
  try {
    launch();
    std::optional<CheckpointTimer> timer;
    if (opt_.checkpoint_every > 0) timer.emplace(pid_, opt_.checkpoint_every);
    int status = loop();
    if (opt_.kill_switch) opt_.kill_switch->detach();
    if (killed()) {
      write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
      return 1;
    }
    return status;
  } catch (const std::exception& e) {
    // The program died under the monitor's work (a SIGKILL from outside): its end is
    // reported as any other end of the program, with its status (issue 16, item 10).
    if (std::optional<WaitStatus> ws = died_meanwhile(e)) {
      int status = finish(*ws);
      // As at the end of loop(): finish() may have pulled the kill switch (a node's job
      // failed because of this end); its reason is the one message.
      if (opt_.kill_switch) opt_.kill_switch->detach();
      if (killed()) {
        write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
        return 1;
      }
      return status;
    }
    kill_and_reap();
    return fail(e);
  }
}

// ESRCH from any ptrace call means the tracee is gone or going: a thread in a ptrace-stop
// cannot vanish unless the process is being killed (docs/errors.md); so does any error
// while /proc shows the process dying. Then the program's own
// end comes within moments: wait for it (bounded), and give its status. Not when the kill
// switch was pulled: that reason is said instead.
std::optional<WaitStatus> Supervisor::died_meanwhile(const std::exception& e) {
  if (pid_ <= 0 || killed()) return std::nullopt;
  if (const auto* d = dynamic_cast<const TraceeDied*>(&e); d && d->tid == pid_) {
    pid_ = 0;  // the wait that saw it reaped it
    return d->status;
  }
  const auto* sys = dynamic_cast<const SystemError*>(&e);
  // Any other error may be the death seen sideways: a killed program's maps read empty, so
  // an inject made meanwhile finds its runs "outside the tracked memory" (a UserError).
  if (!dynamic_cast<const TraceeDied*>(&e) && !(sys && sys->error == ESRCH) && !being_killed(pid_))
    return std::nullopt;
  // Bounded: 2 s of 1 ms polls; a program that does not end by then is killed below as
  // for any monitor failure.
  for (int i = 0; i < 2000; ++i) {
    int raw = 0;
    pid_t got = ::waitpid(-1, &raw, __WALL | WNOHANG);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) {
      ::usleep(1000);
      continue;
    }
    WaitStatus ws{raw};
    if (got == pid_ && (ws.kind() == WaitStatus::exited || ws.kind() == WaitStatus::signaled)) return ws;
    if (ws.kind() != WaitStatus::exited && ws.kind() != WaitStatus::signaled) {
      // A thread still stopped: the program is not being killed after all.
      CAPE_LOG_AT(debug, "monitor") << "thread " << got << " stopped (" << ws.describe() << ") after " << e.what();
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// docs/errors.md. What the user can act on (UserError, a bad checkpoint: ckpt::Error) is
// said as it is. Anything else went wrong in the monitor's own work in the program: the
// program dying under it (TraceeDied: SIGKILL from outside), or a ptrace call or remote
// syscall failing; if the kill switch was pulled, that is the cause, so its reason is said.
int Supervisor::fail(const std::exception& e) {
  const auto* user = dynamic_cast<const UserError*>(&e);
  bool for_the_user = user || dynamic_cast<const ckpt::Error*>(&e);
  if (!for_the_user && killed()) {
    write_stderr("cape: " + opt_.kill_switch->reason() + "\n");
    return 1;
  }
  bool internal = !for_the_user && !dynamic_cast<const TraceeDied*>(&e);
  write_stderr(std::string("cape: ") + (internal ? "monitor error: " : "") + e.what() + "\n");
  return user && user->status ? user->status : 1;
}

void Supervisor::kill_and_reap() {
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

int Supervisor::finish(const WaitStatus& ws) {
  if (stops_spun_ || stops_slept_)
    CAPE_LOG_AT(info, "calls") << "stops caught while polling without sleeping (CAPE_TRAP_SPIN_US): " << stops_spun_
                               << ", after sleeping: " << stops_slept_;
  server_.exited(ws);
  pid_ = 0;
  if (ws.kind() == WaitStatus::exited) return ws.exit_code();
  if (!reported_ && !killed())
    write_stderr("cape: the program was " + ws.describe() + "\n");
  return ws.shell_code();
}

int Supervisor::loop() {
  for (;;) {
    int raw = 0;
    pid_t tid = wait_stop(&raw);
    if (tid < 0) {
      if (errno == EINTR) continue;
      fail_errno("waitpid");
    }
    WaitStatus ws{raw};
    if (maps_signal_) maps_signal_->saw_stop(tid);  // a mapping call it made is done
    switch (ws.kind()) {
      case WaitStatus::exited:
      case WaitStatus::signaled:
        threads_.erase(tid);
        awaiting_first_stop_.erase(tid);
        if (tid == pid_) return finish(ws);
        server_.thread_exited(tid);
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

void Supervisor::on_event_stop(pid_t tid, int event) {
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
    maps_cache_for(0);
    if (maps_signal_) maps_signal_->new_image(pid_);
    tracee_ = std::make_unique<Tracee>(pid_);  // /proc/PID/mem of the old image writes nothing
    server_.new_image(pid_);
    if (opt_.at_random) set_at_random(*opt_.at_random);
  }
  resume(tid, 0);
}

void Supervisor::on_signal_stop(pid_t tid, int sig) {
  siginfo_t si{};
  if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0) {
    if (errno == EINVAL) {  // a group-stop (SIGSTOP/SIGTSTP to the process): let it go on
      resume(tid, 0);
      return;
    }
    if (errno == ESRCH) return;
    fail_errno("PTRACE_GETSIGINFO");
  }
  if (maps_signal_ && !(sig == SIGTRAP && si.si_code == SI_KERNEL) && !is_fault(si)) restart_mapping_call(tid);
  if (is_checkpoint_tick(si)) {
    server_.checkpoint_tick(pid_);
    resume(tid, 0);
    return;
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
  tracee_->set_traced_threads(threads_.size());  // (the trackers' one-thread check)
  // Without the maps signal, the maps are read once per stop while the program has one
  // thread; with more, another thread may map something while this one is stopped. With
  // it, such a call is counted (maps_signal.h) and the cache lasts across stops.
  if (maps_signal_)
    maps_cache_for(pid_, maps_signal_.get());
  else
    maps_cache_for(threads_.size() == 1 ? pid_ : 0);
  CAPE_LOG_AT(debug, "monitor") << "thread " << tid << " signal " << sig << " code " << si.si_code
                                << " addr " << si.si_addr;
  bool runtime_call = false;
  user_regs_struct regs{};
  if (sig == SIGTRAP && si.si_code == SI_KERNEL) {
    regs = Tracee::get_regs(tid);
    runtime_call = (regs.rax & CAPE_TRAP_MAGIC_MASK) == CAPE_TRAP_MAGIC;
  }
  // Mappings change without a system call too: the main stack grows on a fault (a stack
  // pointer below what the maps knew says so). Any other stop (a fault, a signal, another
  // thread's call) is rarer than a runtime call of the main thread: read them again.
  if (runtime_call && tid == pid_)
    maps_check_stack(regs.rsp);
  else
    maps_may_change();
  if (sig == SIGTRAP && si.si_code == SI_KERNEL) {
    if (runtime_call) {
      if (!server_.may_serve_now(tid, regs)) {
        CAPE_LOG_AT(debug, "monitor") << "thread " << tid << " waits: another thread of the node holds a critical section";
        parked_.emplace_back(tid, regs);
        return;
      }
      serve(tid, regs);
      serve_parked();
      return;
    }
  }
  StoppedThread st{*tracee_, tid, gadget_};
  if (is_lease_tick(si)) {  // (after the maps' cache is set for this stop: a capture follows)
    server_.lease_tick(st, Tracee::get_regs(tid).rsp);
    resume(tid, 0);
    return;
  }
  if (sig == SIGSEGV && server_.tracking_fault(st, si)) {
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
    CrashReport report = crash_report(pid_, tid, si, others);
    write_stderr(report.text);
    server_.crashed(report.first_frames);
    reported_ = true;
    resume(tid, sig);
    return;
  }
  server_.before_handler(st);
  resume(tid, sig);
}

// A mapping call waiting for the maps signal's notifier when a signal came: the kernel ends
// it with -ERESTARTSYS, which a handler without SA_RESTART turns into EINTR, an error mmap
// and its kin never give without the filter (and the mprotect tracker's resume stub would
// take it for mprotect's result). Restarted here as SA_RESTART would: the call is made
// again after the handler (or at once, without one; the kernel's own restart sees no error
// left to restart).
void Supervisor::restart_mapping_call(pid_t tid) {
  user_regs_struct regs = Tracee::get_regs(tid);
  if (static_cast<long>(regs.rax) != -512 /* ERESTARTSYS */ || !is_mapping_syscall(static_cast<long>(regs.orig_rax)))
    return;
  regs.rax = regs.orig_rax;
  regs.rip -= 2;  // the `syscall` instruction
  Tracee::set_regs(tid, regs);
}

void Supervisor::serve_parked() {
  for (bool again = true; again;) {
    again = false;
    for (auto it = parked_.begin(); it != parked_.end(); ++it) {
      if (!server_.may_serve_now(it->first, it->second)) continue;
      auto [tid, regs] = *it;
      parked_.erase(it);
      maps_may_change();  // another thread's call (see on_signal_stop)
      serve(tid, regs);
      again = true;
      break;
    }
  }
}

void Supervisor::serve(pid_t tid, user_regs_struct regs) {
  gadget_ = regs.rcx;
  // PinMode::calls: the call's stops stay on the monitor's CPU; the program's main thread
  // takes its CPUs back after a call it computes after (libcape, r10: protocol.h).
  bool placed = pin_ == PinMode::calls && tid == pid_ && regs.r10 == CAPE_AFFINITY_ASK;
  if (placed) pin_program_for_call(tid);
  long result = server_.runtime_call(StoppedThread{*tracee_, tid, gadget_}, regs);
  regs.rax = static_cast<unsigned long long>(result);
  if (std::optional<user_regs_struct> all = server_.take_registers()) {
    regs = *all;
  } else if (placed && server_.computes_next()) {
    regs.r10 = program_cpus_;
    program_on_call_cpu_ = false;
  }
  Tracee::set_regs(tid, regs);
  resume(tid, 0);
}

// A stopped thread is not running: its mask changes without a migration, and its next
// wakeup (the PTRACE_CONT) puts it on call_cpu_, where this thread waits for its next stop.
// The program's own mask is what it gets back (it may have set one: OMP_PROC_BIND, taskset
// inside the program); one with CPUs above 63 is left alone.
void Supervisor::pin_program_for_call(pid_t tid) {
  if (program_on_call_cpu_) return;
  cpu_set_t own;
  if (::sched_getaffinity(tid, sizeof own, &own) != 0) return;
  uint64_t mask = 0;
  for (int c = 0; c < 64; c++)
    if (CPU_ISSET(c, &own)) mask |= uint64_t{1} << c;
  if (CPU_COUNT(&own) != __builtin_popcountll(mask)) return;  // a CPU above 63
  program_cpus_ = mask;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(call_cpu_, &set);
  if (::sched_setaffinity(tid, sizeof set, &set) == 0) program_on_call_cpu_ = true;
}

}  // namespace cape::monitor
