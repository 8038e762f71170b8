// The supervisor: the program under ptrace from its launch to its end. It launches it (fork,
// PTRACE_TRACEME, no address randomisation, the node's descriptors, 004's determinism
// contract), runs the event loop over every thread's stops, applies the signal and crash
// policy (a tracking fault goes to the tracker; a fatal signal gets a crash report while the
// threads can still be unwound; SIGPIPE ends quietly, like a shell), follows exec, and is the
// one way out when something fails (docs/errors.md). Everything else the program asks for
// goes to a CallServer (the monitor proper, monitor.cpp).
//
//   Supervisor s(options, server);
//   int status = s.run();   // monitor.h says what it returns
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>

#include <memory>
#include <deque>
#include <optional>
#include <utility>
#include <set>

#include "monitor/dirty_tracker.h"
#include "monitor/maps_signal.h"
#include "monitor/monitor.h"
#include "monitor/tracee.h"

namespace cape::monitor {

// What the supervisor hands on while the program runs.
class CallServer {
 public:
  virtual ~CallServer() = default;
  // The program was launched, or replaced itself (execve): a new image at `pid`.
  virtual void new_image(pid_t pid) = 0;
  // A runtime call (runtime/src/protocol.h: rax holds the operation, rdi and rsi the
  // arguments, rdx the caller's frame boundary); returns the answer for rax. Every runtime
  // call of the program passes here, with the program stopped.
  virtual long runtime_call(const StoppedThread& st, const user_regs_struct& regs) = 0;
  // False: thread `tid`'s runtime call must wait (the thread stays stopped) until another
  // thread's call makes it true: a critical section held by another thread of this node
  // (the two-level model; docs/critical.md "Threads of a node").
  virtual bool may_serve_now(pid_t tid, const user_regs_struct& regs) {
    (void)tid, (void)regs;
    return true;
  }
  // A SIGSEGV signal-stop: true when it was a tracking fault, served (resumed without it).
  virtual bool tracking_fault(const StoppedThread& st, const siginfo_t& info) = 0;
  // A signal handler is about to run in st.tid: the kernel writes its frame below the
  // stack pointer.
  virtual void before_handler(const StoppedThread& st) = 0;
  // A thread other than the main one ended.
  virtual void thread_exited(pid_t tid) { (void)tid; }
  // The program ended (before its end is reported).
  virtual void exited(const WaitStatus& ws) = 0;
  // A signal is about to kill the program; `first_frames` are the first lines of its crash
  // report (the whole report is on the node's stderr).
  virtual void crashed(const std::string& first_frames) { (void)first_frames; }
  // Must the monitor see the program's mapping calls before they run (--sync=lazy)? Then
  // the maps signal's filter is installed whatever CAPE_MAPS_SIGNAL says, or the program
  // does not start.
  virtual bool needs_mapping_calls() const { return false; }
  // Would it like to (mapping calls inside a window: DirtyTracker::before_drop)? Then the
  // filter is installed too, but the program starts without it if it cannot be.
  virtual bool wants_mapping_calls() const { return false; }
  // The program is about to make mapping call `nr` (maps_signal.h): called on the notifier's
  // thread, the caller waiting, while the supervisor's thread goes on.
  virtual void before_mapping_call(long nr, const uint64_t (&args)[6]) { (void)nr, (void)args; }
  // A tick of --checkpoint-every (monitor/cape1_calls.h) stopped the program.
  virtual void checkpoint_tick(pid_t pid) { (void)pid; }
  // A lease tick's stop (lease_words.h, is_lease_tick): the program stopped wherever it was;
  // `sp`: the stopped thread's stack pointer. The signal is not delivered.
  virtual void lease_tick(const StoppedThread& st, uint64_t sp) { (void)st, (void)sp; }
  // After a runtime call (the trap): may the program compute next, so that it may float
  // over the CPUs until its next call (CPU placement, PinMode::calls)? Not after a call
  // that another follows at once (region_begin: start()).
  virtual bool computes_next() const { return true; }
  // After a runtime call: every register the program resumes with, when the call replaced
  // them all (CAPE-1's restart(file)); nothing = only rax, the answer.
  virtual std::optional<user_regs_struct> take_registers() { return std::nullopt; }
};

class Supervisor {
 public:
  Supervisor(const MonitorOptions& options, CallServer& server) : opt_(options), server_(server) {}
  int run();

 private:
  void launch();
  void launch_restarted();  // MonitorOptions::restart
  int loop();
  void on_signal_stop(pid_t tid, int sig);
  void on_event_stop(pid_t tid, int event);
  void serve(pid_t tid, user_regs_struct regs);
  void serve_parked();
  void restart_mapping_call(pid_t tid);  // see supervisor.cpp  // the parked calls that may go now, in the order they came
  void resume(pid_t tid, int sig);
  void set_at_random(const std::array<uint8_t, 16>& bytes);
  int finish(const WaitStatus& ws);
  void kill_and_reap();
  int fail(const std::exception& e);  // the way out: a message and the status
  // The program's own end when `e` says it died under the monitor (TraceeDied, ESRCH), or
  // when it is being killed whatever `e` says.
  std::optional<WaitStatus> died_meanwhile(const std::exception& e);
  bool killed() const { return opt_.kill_switch && opt_.kill_switch->killed(); }

  const MonitorOptions& opt_;
  CallServer& server_;
  pid_t pid_ = 0;
  std::unique_ptr<Tracee> tracee_;
  // The program's mapping calls, counted (maps_signal.h); nullptr: the maps are read again
  // after every time the program ran.
  std::unique_ptr<MapsSignal> maps_signal_;
  bool signal_trusted() const { return maps_signal_ && maps_signal_->trusted(); }
  uint64_t gadget_ = 0;  // libcape's `syscall; int3`, from the last runtime call
  std::set<pid_t> threads_, awaiting_first_stop_;
  std::deque<std::pair<pid_t, user_regs_struct>> parked_;  // may_serve_now said wait
  bool reported_ = false;  // the program's death has been explained already
  // CPU placement (MonitorOptions::pin): under PinMode::calls the monitor's thread stays on
  // call_cpu_, the program's main thread is put there at each trap and given back its own
  // mask, program_cpus_ (r10, protocol.h), when it computes next.
  PinMode pin_ = PinMode::none;
  int call_cpu_ = -1;
  uint64_t program_cpus_ = 0;
  bool program_on_call_cpu_ = false;
  void pin_program_for_call(pid_t tid);
  // CAPE_TRAP_SPIN_US (docs/critical.md, "Session 12"): for that long after a resume the
  // monitor polls for the program's next stop without sleeping (0: it sleeps in waitpid at
  // once). Bounded: on 2 vCPUs the spin may hold the CPU the program needs.
  pid_t wait_stop(int* raw);
  int64_t trap_spin_ns_ = -1;  // -1: not read yet
  int64_t resumed_ns_ = 0;     // the last resume (steady clock)
  uint64_t stops_spun_ = 0, stops_slept_ = 0;
};

}  // namespace cape::monitor
