// "The program's mappings did not change": a sound signal, so that the monitor reads
// /proc/PID/maps only when they may have (issue 14: ~10 reads per empty region on 3 nodes,
// 13.5% of the job's CPU, because the program may map memory between any two calls).
//
// The monitor's fork child installs a seccomp filter before exec (the program and every
// thread and process it starts inherit it) that returns SECCOMP_RET_USER_NOTIF for the
// system calls that can change the address space (mmap, munmap, mremap, mprotect, brk,
// madvise, shmat, ...: docs/monitor.md "Fifth pass" gives the list and why). A thread of
// the monitor (the notifier) receives each notification, counts it as a change and lets the
// call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The maps cache (memory_map.h) trusts its
// last read while no change was counted since and no mapping call of a thread is still
// under way (counted, let go, not yet seen to stop: the call finishes after the answer).
//
// Not RET_TRACE with ptrace stops: a process the program forks is not traced, and a
// RET_TRACE syscall without a tracer fails with ENOSYS (system(), popen() would break). With
// USER_NOTIF the notifier answers every process that holds the filter.
//
// What changes the mappings without such a call is handled by the monitor: its own remote
// syscalls and gadgets (they invalidate the cache themselves and carry kMonitorMark in r9,
// which the filter lets through without a notification), the main stack growing on a fault
// (the supervisor compares each trap's stack pointer with the cached maps), execve (a new
// image). A call the signal cannot follow (the program's own userfaultfd or io_uring, an
// mmap with MAP_GROWSDOWN, a 32-bit or x32 system call, a process sharing the memory that is
// not one of the program's threads) turns it off for the image: the maps are read again
// after every stop, as without it. CAPE_MAPS_SIGNAL=0 turns it off.
//
// --sync=lazy also needs to see the program's mapping calls before they run (lazy.h,
// before_mapping_call): the notifier calls `before_call` for every call of a thread sharing
// the program's memory, then lets it go on; and for a fork (fork, clone or clone3 without
// CLONE_VM: a child with a copy of the memory, which lazy's userfaultfd does not follow) it
// calls `before_call(SYS_fork, args)` first (the filter then lists those calls too). Then the filter is installed even with
// CAPE_MAPS_SIGNAL=0 (prepare(true)), which then only stops the maps cache trusting it.
//
//   bool want = MapsSignal::prepare();          // before fork: builds the filter
//   child:  MapsSignal::install_in_child(want); raise(SIGSTOP); exec
//   parent: auto s = MapsSignal::take(pid, want); // after the child's SIGSTOP; nullptr = off
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "util/scoped_fd.h"

namespace cape::monitor {

// In r9 of the monitor's own mapping syscalls (the 6th argument, unused by all of them but
// mmap and mbind): the filter lets them through; the monitor counts them itself. Not page
// aligned, so no real mmap offset equals it.
inline constexpr uint64_t kMonitorMark = 0x43415045ca5e0a11ULL;

// Does system call `nr` (x86_64) possibly change the mappings (the filter's list)?
bool is_mapping_syscall(long nr);
// Does `nr` (fork, clone, clone3 with `clone_flags`) make a process with a copy of the
// memory? With prepare(true) the filter stops those too, and before_call gets SYS_fork.
bool is_copying_fork(long nr, uint64_t clone_flags);

class MapsSignal {
 public:
  // Before fork (not async-signal-safe): builds the filter; false when CAPE_MAPS_SIGNAL=0
  // and `needed` is false (then install_in_child(false) and take(pid, false) do nothing).
  static bool prepare(bool needed = false);
  // In the fork child, async-signal-safe: installs the filter with a listener; the result
  // (the listener's descriptor, or -errno) stays in the child's memory for take().
  static void install_in_child(bool wanted);
  // In the monitor, the child stopped (ptrace) after install_in_child(): takes the
  // listener (pidfd_getfd) and starts the notifier. nullptr when there is no signal.
  // `before_call(nr, args)`: see above (may be empty).
  using BeforeCall = std::function<void(long nr, const uint64_t (&args)[6])>;
  static std::unique_ptr<MapsSignal> take(pid_t pid, bool wanted, BeforeCall before_call = {});

  ~MapsSignal();  // stops the notifier
  MapsSignal(const MapsSignal&) = delete;
  MapsSignal& operator=(const MapsSignal&) = delete;

  // False once the signal cannot vouch for the maps any more (see above).
  bool trusted() const { return vouches_ && trusted_.load(std::memory_order_acquire); }
  // Changes counted so far (mapping calls of the program, in any thread).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // No counted mapping call of a thread is still under way.
  bool quiet() const;
  // A ptrace stop of `tid` was seen: a mapping call it made has finished.
  void saw_stop(pid_t tid);
  // A new image (execve): the other threads are gone.
  void new_image(pid_t pid);

  // For the measurements: notifications answered.
  uint64_t notifications() const { return notifications_.load(std::memory_order_relaxed); }

 private:
  MapsSignal(pid_t pid, int listener, BeforeCall before_call);
  void serve();
  void answer(uint64_t id);
  void before_fork(const seccomp_notif& n);
  void distrust(const char* why);

  pid_t pid_;
  util::ScopedFd listener_, stop_;
  std::atomic<bool> trusted_{true};
  bool vouches_ = true;     // false: CAPE_MAPS_SIGNAL=0 (installed for before_call_ only)
  BeforeCall before_call_;  // set before the notifier starts
  std::atomic<uint64_t> generation_{1}, notifications_{0};
  mutable std::mutex mu_;
  std::set<pid_t> under_way_;  // threads let go in a mapping call, not seen to stop since
  std::thread notifier_;
};

}  // namespace cape::monitor
