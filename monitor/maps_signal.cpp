#include "monitor/maps_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "util/log.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

namespace cape::monitor {

namespace {

// x86_64 numbers of what is newer than some C libraries' headers.
constexpr long kProcessMadvise = 440, kSetMempolicyHomeNode = 450, kMapShadowStack = 453, kMseal = 462;

// The system calls that can change the mappings (docs/monitor.md, "Fifth pass"): they map,
// unmap, move, resize, split (protection, locking, NUMA policy, advice flags, names, seals)
// or make the kernel map for the caller (io_setup's ring, shmat); and those after which the
// signal cannot follow the program (its own userfaultfd or io_uring: their work changes
// mappings without a system call of the program's).
const long kMappingCalls[] = {
    SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_pkey_mprotect, SYS_brk, SYS_madvise,
    kProcessMadvise, SYS_remap_file_pages, SYS_shmat, SYS_shmdt, SYS_mlock, SYS_mlock2,
    SYS_munlock, SYS_mlockall, SYS_munlockall, SYS_mbind, kSetMempolicyHomeNode, kMseal,
    kMapShadowStack, SYS_io_setup, SYS_io_destroy, SYS_userfaultfd, SYS_io_uring_setup,
    SYS_arch_prctl,  // ARCH_MAP_VDSO_*
};

// Built once, before any fork (the child only passes it to seccomp(2)): without and with
// the calls that make a process with a copy of the memory (prepare(true): lazy).
std::once_flag g_built;
std::vector<sock_filter> g_filter[2];
sock_fprog g_prog[2]{};
const sock_fprog* g_use = nullptr;
// What the child's install gave (its copy of this word): the listener, or -errno.
volatile long g_child_result = -ENOSYS;

// A classic BPF program with forward jumps to labels.
class Bpf {
 public:
  enum Label { next = -1, allow, notify, mark_check, ioctl_check, prctl_check, clone_check, kLabels };
  void stmt(uint16_t code, uint32_t k) { code_.push_back({{code, 0, 0, k}, next, next}); }
  void jump(uint16_t code, uint32_t k, int t, int f) { code_.push_back({{code, 0, 0, k}, t, f}); }
  void label(Label l) { at_[l] = code_.size(); }
  std::vector<sock_filter> done() const {
    std::vector<sock_filter> out;
    for (size_t i = 0; i < code_.size(); i++) {
      sock_filter f = code_[i].f;
      auto off = [&](int l) -> uint8_t { return l == next ? 0 : static_cast<uint8_t>(at_[l] - i - 1); };
      if (BPF_CLASS(f.code) == BPF_JMP) {
        f.jt = off(code_[i].t);
        f.jf = off(code_[i].f_);
      }
      out.push_back(f);
    }
    return out;
  }

 private:
  struct Insn {
    sock_filter f;
    int t, f_;
  };
  std::vector<Insn> code_;
  size_t at_[kLabels] = {};
};

constexpr uint32_t arg_lo(int i) { return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i); }

// `forks`: also fork, clone without CLONE_VM and clone3 (whose flags are in memory: the
// notifier reads them), for lazy (is_copying_fork); vfork and clone(CLONE_VM) share the
// memory, and lazy's handler serves their faults as the program's.
std::vector<sock_filter> build_filter(bool forks) {
  Bpf b;
  const uint16_t ld = BPF_LD | BPF_W | BPF_ABS, jeq = BPF_JMP | BPF_JEQ | BPF_K, jge = BPF_JMP | BPF_JGE | BPF_K;
  b.stmt(ld, offsetof(seccomp_data, arch));
  b.jump(jeq, AUDIT_ARCH_X86_64, Bpf::next, Bpf::notify);  // int 0x80: other numbers
  b.stmt(ld, offsetof(seccomp_data, nr));
  b.jump(jge, 0x40000000, Bpf::notify, Bpf::next);  // x32
  b.jump(jeq, SYS_ioctl, Bpf::ioctl_check, Bpf::next);
  b.jump(jeq, SYS_prctl, Bpf::prctl_check, Bpf::next);
  for (long nr : kMappingCalls) b.jump(jeq, static_cast<uint32_t>(nr), Bpf::mark_check, Bpf::next);
  if (forks) {
    b.jump(jeq, SYS_fork, Bpf::notify, Bpf::next);
    b.jump(jeq, SYS_clone3, Bpf::notify, Bpf::next);
    b.jump(jeq, SYS_clone, Bpf::clone_check, Bpf::next);
  }
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  b.label(Bpf::clone_check);  // clone(flags, ...): a copy of the memory unless CLONE_VM
  b.stmt(ld, arg_lo(0));
  b.jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, Bpf::allow, Bpf::notify);
  b.label(Bpf::mark_check);  // the monitor's own call: r9 = kMonitorMark
  b.stmt(ld, arg_lo(5));
  b.jump(jeq, static_cast<uint32_t>(kMonitorMark), Bpf::next, Bpf::notify);
  b.stmt(ld, arg_lo(5) + 4);
  b.jump(jeq, static_cast<uint32_t>(kMonitorMark >> 32), Bpf::allow, Bpf::notify);
  b.label(Bpf::ioctl_check);  // the program's own userfaultfd
  b.stmt(ld, arg_lo(1));
  b.jump(jeq, static_cast<uint32_t>(UFFDIO_REGISTER), Bpf::notify, Bpf::next);
  b.jump(jeq, static_cast<uint32_t>(UFFDIO_UNREGISTER), Bpf::notify, Bpf::next);
  b.jump(jeq, static_cast<uint32_t>(USERFAULTFD_IOC_NEW), Bpf::notify, Bpf::allow);
  b.label(Bpf::prctl_check);  // the heap's and stack's places, anonymous mappings' names
  b.stmt(ld, arg_lo(0));
  b.jump(jeq, PR_SET_MM, Bpf::notify, Bpf::next);
  b.jump(jeq, PR_SET_VMA, Bpf::notify, Bpf::allow);
  b.label(Bpf::notify);
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  b.label(Bpf::allow);
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  return b.done();
}

}  // namespace

bool is_mapping_syscall(long nr) {
  for (long m : kMappingCalls)
    if (m == nr) return true;
  return false;
}

bool is_copying_fork(long nr, uint64_t clone_flags) {
  if (nr == SYS_fork) return true;
  if (nr == SYS_clone || nr == SYS_clone3) return !(clone_flags & CLONE_VM);
  return false;
}

bool MapsSignal::prepare(bool needed) {
  const char* e = std::getenv("CAPE_MAPS_SIGNAL");
  if (e && std::string_view(e) == "0" && !needed) return false;
  std::call_once(g_built, [] {
    for (int forks = 0; forks < 2; forks++) {
      g_filter[forks] = build_filter(forks == 1);
      g_prog[forks].len = static_cast<unsigned short>(g_filter[forks].size());
      g_prog[forks].filter = g_filter[forks].data();
    }
  });
  g_use = &g_prog[needed ? 1 : 0];
  return true;
}

void MapsSignal::install_in_child(bool wanted) {
  if (!wanted) return;
  unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, g_use);
  if (fd < 0 && errno == EACCES) {
    // Without CAP_SYS_ADMIN a filter needs no_new_privs (setuid programs the program runs
    // then get no privileges: docs/monitor.md).
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, g_use);
  }
  g_child_result = fd >= 0 ? fd : -errno;
}

std::unique_ptr<MapsSignal> MapsSignal::take(pid_t pid, bool wanted, BeforeCall before_call) {
  if (!wanted) return nullptr;
  errno = 0;
  long r = ::ptrace(PTRACE_PEEKDATA, pid, const_cast<long*>(&g_child_result), nullptr);
  if (errno != 0 || r < 0) {
    CAPE_LOG_AT(info, "monitor") << "maps signal off: the filter was not installed ("
                                 << std::strerror(errno != 0 ? errno : static_cast<int>(-r)) << ")";
    return nullptr;
  }
  util::ScopedFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  int fd = pidfd.valid() ? static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(r), 0)) : -1;
  if (fd < 0) {
    // The filter is in place and nobody would answer it: every mapping call of the program
    // would wait forever. Not a state to go on from.
    throw std::runtime_error(std::string("taking the program's seccomp listener: ") + std::strerror(errno) +
                             " (CAPE_MAPS_SIGNAL=0 runs without it)");
  }
  return std::unique_ptr<MapsSignal>(new MapsSignal(pid, fd, std::move(before_call)));
}

MapsSignal::MapsSignal(pid_t pid, int listener, BeforeCall before_call)
    : pid_(pid), listener_(listener), before_call_(std::move(before_call)) {
  const char* e = std::getenv("CAPE_MAPS_SIGNAL");
  vouches_ = !(e && std::string_view(e) == "0");
  stop_.reset(::eventfd(0, EFD_CLOEXEC));
  if (!stop_.valid()) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  notifier_ = std::thread([this] { serve(); });
}

MapsSignal::~MapsSignal() {
  uint64_t one = 1;
  if (::write(stop_.get(), &one, sizeof one) < 0) {
  }
  if (notifier_.joinable()) notifier_.join();
}

bool MapsSignal::quiet() const {
  std::lock_guard<std::mutex> lock(mu_);
  return under_way_.empty();
}

void MapsSignal::saw_stop(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  under_way_.erase(tid);
}

void MapsSignal::new_image(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  pid_ = pid;
  under_way_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  // What made it distrust the signal belonged to the old address space.
  trusted_.store(true, std::memory_order_release);
}

void MapsSignal::distrust(const char* why) {
  if (trusted_.exchange(false)) CAPE_LOG_AT(info, "monitor") << "maps signal off for this image: " << why;
}

// The notifier: counts each mapping call of the program's and lets it go on. Every process
// holding the filter waits for this answer (the program's children too), so it answers
// until the monitor ends.
void MapsSignal::serve() {
  seccomp_notif n;
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      if (!(fds[0].revents & POLLIN)) return;  // no process holds the filter any more
    }
    std::memset(&n, 0, sizeof n);
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &n) != 0) continue;  // gone meanwhile
    notifications_.fetch_add(1, std::memory_order_relaxed);
    pid_t tid = static_cast<pid_t>(n.pid);
    long nr = n.data.nr;
    if (n.data.arch == AUDIT_ARCH_X86_64 && (nr == SYS_fork || nr == SYS_clone || nr == SYS_clone3)) {
      before_fork(n);  // not a mapping call of the program's: nothing counted
      answer(n.id);
      continue;
    }
    bool same_memory = false;
    pid_t program = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      program = pid_;
      bool thread = tid == pid_ || ::syscall(SYS_tgkill, pid_, tid, 0) == 0;
      // Another process sharing the program's memory (vfork, clone(CLONE_VM)): not traced,
      // so the end of its call is never seen.
      long same_vm = thread ? 0 : ::syscall(SYS_kcmp, pid_, tid, KCMP_VM, 0, 0);
      bool shares = thread || same_vm <= 0;  // 0: the same; -1: unknown
      same_memory = same_vm == 0;
      if (thread) {
        if (n.data.arch != AUDIT_ARCH_X86_64 || nr >= 0x40000000)
          distrust("a 32-bit or x32 system call");
        else if (nr == SYS_userfaultfd || nr == SYS_ioctl)
          distrust("the program uses userfaultfd");
        else if (nr == SYS_io_uring_setup)
          distrust("the program uses io_uring");
        else if (nr == SYS_mmap && (n.data.args[3] & MAP_GROWSDOWN))
          distrust("a MAP_GROWSDOWN mapping");
        under_way_.insert(tid);
        generation_.fetch_add(1, std::memory_order_acq_rel);
      } else if (shares) {
        distrust("another process shares the program's memory");
        generation_.fetch_add(1, std::memory_order_acq_rel);
      }
    }
    // Counted first: the mappings lazy joins again meanwhile are then not trusted either.
    if (before_call_ && same_memory && n.data.arch == AUDIT_ARCH_X86_64) {
      uint64_t args[6];
      for (int i = 0; i < 6; i++) args[i] = n.data.args[i];
      try {
        before_call_(nr, args);
      } catch (const std::exception& e) {
        // The page could not be fetched (the job is failing): end the program, as the page
        // fault handler does, after saying why.
        CAPE_LOG_AT(error, "monitor") << "before the program's mapping call " << nr << ": " << e.what();
        ::kill(program, SIGKILL);
      }
    }
    answer(n.id);
  }
}

void MapsSignal::answer(uint64_t id) {
  seccomp_notif_resp resp;
  std::memset(&resp, 0, sizeof resp);
  resp.id = id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp);  // ENOENT: the caller was killed
}

// fork, clone or clone3 (the filter lets the others through: prepare(true) only). A child
// with a copy of the program's memory does not inherit lazy's userfaultfd registration
// (no UFFD_FEATURE_EVENT_FORK): a page still invalid would read as zeros there. So lazy
// makes every page valid first (before_call_(SYS_fork)), unless the new process shares the
// memory (CLONE_VM: its faults are the program's), or the caller is not the program (its
// children: their memory is theirs).
void MapsSignal::before_fork(const seccomp_notif& n) {
  if (!before_call_) return;
  pid_t tid = static_cast<pid_t>(n.pid), program = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    program = pid_;
  }
  bool thread = tid == program || ::syscall(SYS_tgkill, program, tid, 0) == 0;
  if (!thread && ::syscall(SYS_kcmp, program, tid, KCMP_VM, 0, 0) != 0) return;
  uint64_t flags = n.data.args[0];
  if (n.data.nr == SYS_clone3) {  // struct clone_args: flags first, in the caller's memory
    iovec local{&flags, sizeof flags}, remote{reinterpret_cast<void*>(n.data.args[0]), sizeof flags};
    if (n.data.args[1] < sizeof flags || ::process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof flags)
      flags = 0;  // unreadable: the kernel refuses the call; made valid anyway (costs time only)
  }
  if (!is_copying_fork(n.data.nr, flags)) return;
  uint64_t args[6];
  for (int i = 0; i < 6; i++) args[i] = n.data.args[i];
  try {
    before_call_(SYS_fork, args);
  } catch (const std::exception& e) {
    CAPE_LOG_AT(error, "monitor") << "before the program's fork: " << e.what();
    ::kill(program, SIGKILL);
  }
}

}  // namespace cape::monitor
