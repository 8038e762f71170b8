#include "monitor/restart.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "ckpt/hash.h"
#include "ckpt/process_image.h"
#include "injector/injector.h"
#include "monitor/complete.h"
#include "monitor/memory_map.h"
#include "monitor/step_syscall.h"
#include "monitor/tracee.h"  // kPageSize, page_up, WaitStatus
#include "util/error.h"
#include "util/log.h"
#include "util/scoped_fd.h"

namespace cape::monitor {
namespace {

using ckpt::ProcessMapping;
using What = ProcessMapping::What;

std::string range(uint64_t s, uint64_t e) { return ckpt::hex_address(s) + "-" + ckpt::hex_address(e); }

What what_of(const Mapping& m) {
  const std::string& p = m.path;
  if (p == "[stack]") return What::stack;
  if (p == "[vdso]") return What::vdso;
  if (p == "[vvar]" || p == "[vvar_vclock]") return What::vvar;
  if (p == "[vsyscall]") return What::vsyscall;
  if (p == "[heap]") return What::heap;
  if (!p.empty() && p[0] == '[' && p.rfind("[anon:", 0) != 0) return What::special;
  return p.empty() || p[0] != '/' ? What::anon : What::file;
}

uint64_t start_brk_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  for (int i = 3; i <= 47 && fields >> f; ++i)
    if (i == 47) return std::strtoull(f.c_str(), nullptr, 10);
  return 0;
}

// The checks made before any process is started.
void check_identity(const ckpt::ProcessImage& p, const std::string& exe) {
  std::vector<uint8_t> id = read_build_id(exe);
  if (!p.build_id.empty()) {
    if (id != p.build_id)
      throw UserError("the checkpoint was made from " + p.exe + " (build id " + hex(p.build_id) + "), not from " + exe +
                      (id.empty() ? " (no build id)" : " (build id " + hex(id) + ")") +
                      ": restart it with the executable it was made from (cape restart FILE -- PROGRAM)");
  } else {
    uint64_t size, hash;
    hash_file(exe, size, hash);
    if (size != p.exe_size || hash != p.exe_hash)
      throw UserError("the checkpoint was made from " + p.exe + " (no build id; " + std::to_string(p.exe_size) +
                      " bytes), and " + exe + " has other content: restart it with the executable it was made from");
  }
  for (const ckpt::ProcessFile& f : p.files) {
    if (f.path == p.exe) continue;  // the build id said it
    uint64_t size = 0, hash = 0;
    try {
      hash_file(f.path, size, hash);
    } catch (const UserError& e) {
      throw UserError(std::string(e.what()) + " (the program had it mapped: restart on a node that has it)");
    }
    if (size != f.size || hash != f.hash)
      throw UserError(f.path + " is not the file the program had mapped when the checkpoint was made (" +
                      std::to_string(f.size) + " bytes then, " + std::to_string(size) +
                      " now, or other content): restart on a node with the same " + f.path);
  }
  for (const ckpt::ProcessFd& f : p.fds) {
    util::ScopedFd fd(::open(f.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid())
      throw UserError("cannot reopen " + f.path + " (descriptor " + std::to_string(f.fd) + " of the program): " +
                      std::strerror(errno));
  }
}

// In the child, before exec: what exec keeps (descriptors, cwd, signal mask, ignored signals).
[[noreturn]] void child(const ckpt::ProcessImage& p, const std::vector<std::string>& argv, const RestartOptions& o) {
  auto die = [](const std::string& what) {
    std::string m = "cape restart: " + what + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, m.data(), m.size());
    ::_exit(126);
  };
  if (o.stdin_fd >= 0) ::dup2(o.stdin_fd, 0);
  if (o.stdout_fd >= 0) ::dup2(o.stdout_fd, 1);
  if (o.stderr_fd >= 0) ::dup2(o.stderr_fd, 2);
  if (o.die_with_parent) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_DUMPABLE, 1);
  ::syscall(SYS_close_range, 3, ~0U, 0);
  for (const ckpt::ProcessFd& f : p.fds) {
    int fd = ::open(f.path.c_str(), (f.path.rfind("/dev/", 0) == 0 ? f.flags & O_ACCMODE : O_RDONLY) | (f.flags & O_NONBLOCK));
    if (fd < 0) die("reopening " + f.path);
    if (fd != f.fd) {
      if (::dup2(fd, f.fd) < 0) die("dup2");
      ::close(fd);
    }
    if (::lseek(f.fd, static_cast<off_t>(f.offset), SEEK_SET) < 0) die("seeking in " + f.path);
  }
  if (::chdir(p.cwd.c_str()) != 0) die("the program's working directory " + p.cwd);
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig = 1; sig <= 64; ++sig) {
    if (p.sig_blocked >> (sig - 1) & 1) sigaddset(&mask, sig);
    if ((p.sig_ignored >> (sig - 1) & 1) && sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_IGN);
  }
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::personality(ADDR_NO_RANDOMIZE);
  if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) die("PTRACE_TRACEME");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  die("cannot run " + argv[0]);
  ::_exit(127);
}

// Kills the new process unless it was handed over.
struct ChildGuard {
  pid_t pid;
  bool armed = true;
  ~ChildGuard() {
    if (!armed) return;
    ::kill(pid, SIGKILL);
    int st;
    ::waitpid(pid, &st, __WALL);
  }
};

class Rebuilder {
 public:
  Rebuilder(pid_t pid, StepSyscalls& remote) : pid_(pid), remote_(remote) {
    mem_.reset(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDWR | O_CLOEXEC));
    if (!mem_.valid()) fail_errno("opening the memory of the new process");
  }
  long call(const std::string& what, long no, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
            long a6 = 0) {
    long r = remote_.syscall(no, a1, a2, a3, a4, a5, a6);
    if (r < 0 && r > -4096)
      throw UserError("restart: " + what + " failed in the new process: " + std::strerror(static_cast<int>(-r)));
    return r;
  }
  void write(uint64_t at, const void* data, size_t n) {
    if (::pwrite(mem_.get(), data, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n))
      fail_errno("writing into the new process");
  }
  void set_scratch(uint64_t a) { scratch_ = a; }
  uint64_t scratch() const { return scratch_; }
  int open_file(const std::string& path) {
    auto it = fds_.find(path);
    if (it != fds_.end()) return it->second;
    if (path.size() >= kPageSize) throw UserError("restart: path too long: " + path);
    write(scratch_, path.c_str(), path.size() + 1);
    int fd = static_cast<int>(call("opening " + path, SYS_openat, AT_FDCWD, static_cast<long>(scratch_), O_RDONLY | O_CLOEXEC));
    fds_[path] = fd;
    return fd;
  }
  void close_files() {
    for (auto& [path, fd] : fds_) call("close", SYS_close, fd);
    fds_.clear();
  }

 private:
  pid_t pid_;
  StepSyscalls& remote_;
  util::ScopedFd mem_;
  uint64_t scratch_ = 0;
  std::map<std::string, int> fds_;
};

// Maps the checkpoint's mappings again at their addresses (their contents come later):
// anonymous memory, the stack, files by path (`exe` for the executable's). With `same_heap`
// the break is moved instead of mapping [heap]. `what` names the operation in messages.
void map_again(Rebuilder& rb, const ckpt::ProcessImage& p, const std::string& exe, bool same_heap, const std::string& what) {
  for (const ProcessMapping& m : p.mappings) {
    long len = static_cast<long>(m.end - m.start), at = static_cast<long>(m.start);
    std::string where = (m.path.empty() ? std::string("anonymous memory") : m.path) + " at " + range(m.start, m.end);
    switch (m.what) {
      case What::vdso:
      case What::vvar:
      case What::vsyscall:
      case What::special: break;
      case What::stack:
        rb.call("mmap of " + where, SYS_mmap, at, len, m.prot,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN, -1, 0);
        break;
      case What::heap:
        if (same_heap) break;  // brk() below
        [[fallthrough]];
      case What::anon:
        rb.call("mmap of " + where, SYS_mmap, at, len, m.prot,
                (m.shared ? MAP_SHARED | MAP_NORESERVE : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        break;
      case What::file: {
        if (m.shared) throw UserError(what + ": a shared mapping (" + where + ") cannot be restored");
        int fd = rb.open_file(m.path == p.exe ? exe : m.path);
        rb.call("mmap of " + where, SYS_mmap, at, len, m.prot, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd,
                static_cast<long>(m.offset));
        break;
      }
    }
  }
}


// A free page for paths and sigaction structs: outside every saved mapping and every
// mapping of the new process.
uint64_t scratch_address(const ckpt::ProcessImage& p, const std::vector<Mapping>& now) {
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (const auto& m : p.mappings) used.emplace_back(m.start, m.end);
  for (const auto& m : now) used.emplace_back(m.start, m.end);
  if (p.brk > p.start_brk) used.emplace_back(p.start_brk, page_up(p.brk) + (64 << 20));
  std::sort(used.begin(), used.end());
  uint64_t at = 0x10000000;  // well above mmap_min_addr and below PIE/heap
  for (auto [s, e] : used) {
    if (e <= at) continue;
    if (s >= at + kPageSize) return at;
    at = std::max(at, e);
  }
  return at;
}

}  // namespace

pid_t restart_process(const ckpt::Checkpoint& c, const RestartOptions& options) {
  if (c.kind != ckpt::Kind::complete || c.process.empty())
    throw UserError("a " + std::string(ckpt::to_string(c.kind)) +
                    " checkpoint without a process section cannot be restarted: cape restart needs a complete "
                    "checkpoint of a whole process (cape checkpoint PID FILE, or create() under cape monitor)");
  if (!c.registers || c.registers->arch != ckpt::Arch::x86_64 || c.registers->bytes.size() != sizeof(user_regs_struct))
    throw UserError("the checkpoint has no x86_64 register set: it cannot be restarted");
  ckpt::ProcessImage p = ckpt::decode_process(c.process);
  std::vector<std::string> argv = options.command;
  if (argv.empty()) argv = {p.exe};
  check_identity(p, argv[0]);
  user_regs_struct regs;
  std::memcpy(&regs, c.registers->bytes.data(), sizeof regs);

  pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) child(p, argv, options);
  ChildGuard guard{pid};
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) fail_errno("waitpid");
  if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
    guard.armed = WIFSTOPPED(st);
    throw UserError("restart: the new process did not start (" + WaitStatus{st}.describe() + ")");
  }
  if (::ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_EXITKILL) != 0) fail_errno("PTRACE_SETOPTIONS");

  std::vector<Mapping> now = read_maps(pid);
  {
    StepSyscalls remote(pid);
    Rebuilder rb(pid, remote);
    // A page of our own, outside every mapping old and new: a `syscall` to run from once the
    // [vdso] is gone, paths, sigaction structs, the layout for PR_SET_MM_MAP.
    uint64_t scratch = scratch_address(p, now);
    rb.call("mmap of a scratch page", SYS_mmap, static_cast<long>(scratch), kPageSize, PROT_READ | PROT_WRITE | PROT_EXEC,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    const uint8_t syscall_insn[2] = {0x0f, 0x05};
    rb.write(scratch, syscall_insn, 2);
    remote.set_gadget(scratch);
    rb.set_scratch(scratch + 64);
    // Everything exec mapped goes (the stack and the [vdso] too: a checkpoint of a program
    // started with address randomisation has them elsewhere), but [vsyscall], which cannot.
    for (const Mapping& m : now)
      if (what_of(m) != What::vsyscall)
        rb.call("munmap " + range(m.start, m.end), SYS_munmap, static_cast<long>(m.start), static_cast<long>(m.end - m.start));
    uint64_t vvar_start = 0;
    for (const ProcessMapping& m : p.mappings) {
      if (m.what == What::vvar && !vvar_start) vvar_start = m.start;
      if (m.what == What::vsyscall || m.what == What::special) {
        bool same = false;
        for (const Mapping& n : now) same |= n.path == m.path && n.start == m.start && n.end == m.end;
        if (!same)
          throw UserError("restart: this kernel has no " + m.path + " at " + range(m.start, m.end) +
                          ": restart on a node like the one that made the checkpoint");
      }
    }
    // The [vdso] where it was (a checkpoint holds return addresses into it): ARCH_MAP_VDSO_64
    // maps the kernel's [vvar] pages and [vdso] from `vvar_start` up.
    if (vvar_start) rb.call("mapping the [vdso] at " + ckpt::hex_address(vvar_start), SYS_arch_prctl, 0x2003, static_cast<long>(vvar_start));
    for (const Mapping& n : read_maps(pid)) {
      What w = what_of(n);
      if (w != What::vdso && w != What::vvar) continue;
      bool same = false;
      for (const ProcessMapping& m : p.mappings) same |= m.path == n.path && m.start == n.start && m.end == n.end;
      if (!same)
        throw UserError("restart: this kernel's " + n.path + " (" + range(n.start, n.end) +
                        ") is not laid out as the checkpoint's: restart on a node running the same kernel");
      if (w == What::vdso) {
        std::vector<uint8_t> code(n.end - n.start);
        util::ScopedFd mem(::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
        if (::pread(mem.get(), code.data(), code.size(), static_cast<off_t>(n.start)) != static_cast<ssize_t>(code.size()))
          fail_errno("reading the [vdso]");
        if (p.vdso_hash && ckpt::hash64(code) != p.vdso_hash)
          throw UserError("restart: this kernel's [vdso] is not the one the checkpoint was made under: restart it on a "
                          "node running the same kernel");
      }
    }
    bool same_heap = start_brk_of(pid) == p.start_brk;
    map_again(rb, p, argv[0], same_heap, "restart");
    rb.close_files();
    if (same_heap) {
      if (p.brk != p.start_brk) {
        long b = rb.call("brk", SYS_brk, static_cast<long>(p.brk));
        if (static_cast<uint64_t>(b) != p.brk)
          throw UserError("restart: cannot move the break to " + ckpt::hex_address(p.brk) + " (it is at " +
                          ckpt::hex_address(static_cast<uint64_t>(b)) + ")");
      }
      for (const ProcessMapping& m : p.mappings)
        if (m.what == What::heap && m.prot != (PROT_READ | PROT_WRITE))
          rb.call("mprotect of the heap", SYS_mprotect, static_cast<long>(m.start), static_cast<long>(m.end - m.start), m.prot);
    }
    // The kernel's record of the layout (heap, stack, arguments: what brk() and
    // /proc/PID/cmdline use) as the checkpointed process had it. Needs CAP_SYS_RESOURCE.
    if (p.layout.size() == 9) {
      uint64_t map[13] = {p.layout[0], p.layout[1], p.layout[2], p.layout[3], p.start_brk, p.brk, p.layout[4],
                          p.layout[5], p.layout[6], p.layout[7], p.layout[8], 0, 0};
      uint32_t* tail = reinterpret_cast<uint32_t*>(&map[12]);
      tail[0] = 0;           // auxv_size: keep
      tail[1] = 0xffffffff;  // exe_fd: keep
      rb.write(rb.scratch(), map, sizeof map);
      long r = remote.syscall(SYS_prctl, PR_SET_MM, PR_SET_MM_MAP, static_cast<long>(rb.scratch()), sizeof map);
      if (r < 0 && !same_heap)
        throw UserError(std::string("restart: cannot set the heap's place in the new process (PR_SET_MM_MAP: ") +
                        std::strerror(static_cast<int>(-r)) +
                        "); the checkpointed program ran with address randomisation: restart as root, or checkpoint "
                        "a program started with it off (setarch -R, or under cape)");
    }
    injector::write_checkpoint(pid, c);
    if (p.tid_address) {
      uint32_t tid = static_cast<uint32_t>(pid);
      rb.write(p.tid_address, &tid, sizeof tid);
    }
    for (const ckpt::ProcessSigaction& sa : p.sigactions) {
      uint64_t act[4] = {sa.handler, sa.flags, sa.restorer, sa.mask};
      rb.write(rb.scratch(), act, sizeof act);
      rb.call("rt_sigaction(" + std::to_string(sa.signo) + ")", SYS_rt_sigaction, sa.signo,
              static_cast<long>(rb.scratch()), 0, 8);
    }
    for (const ckpt::ProcessFd& f : p.fds)
      if (f.flags & O_CLOEXEC) rb.call("fcntl", SYS_fcntl, f.fd, F_SETFD, FD_CLOEXEC);
    if (p.rseq_address)
      rb.call("rseq registration", SYS_rseq, static_cast<long>(p.rseq_address), p.rseq_length, 0, p.rseq_signature);
    rb.call("munmap of the scratch page", SYS_munmap, static_cast<long>(scratch), kPageSize);
    remote.restore();
  }

  if (p.xstate.size() == sizeof(user_fpregs_struct)) {
    if (::ptrace(PTRACE_SETFPREGS, pid, nullptr, p.xstate.data()) != 0) fail_errno("PTRACE_SETFPREGS");
  } else if (!p.xstate.empty()) {
    iovec iov{p.xstate.data(), p.xstate.size()};
    if (::ptrace(PTRACE_SETREGSET, pid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0)
      throw UserError(std::string("restart: this CPU does not take the checkpoint's FPU/vector state (") +
                      std::strerror(errno) + "): restart it on a node with the same CPU kind");
  }
  if (::ptrace(PTRACE_SETREGS, pid, nullptr, &regs) != 0) fail_errno("PTRACE_SETREGS");
  if (options.detach && ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr) != 0) fail_errno("PTRACE_DETACH");
  guard.armed = false;
  return pid;
}

}  // namespace cape::monitor

namespace cape::monitor {

user_regs_struct restart_in_place(pid_t pid, pid_t tid, const ckpt::Checkpoint& c,
                                  std::pair<uint64_t, uint64_t> keep) {
  if (c.kind != ckpt::Kind::complete || c.process.empty() || !c.registers ||
      c.registers->bytes.size() != sizeof(user_regs_struct))
    throw UserError("restart in place: not a complete checkpoint of a whole process");
  ckpt::ProcessImage p = ckpt::decode_process(c.process);
  std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  if (read_build_id(exe) != p.build_id)
    throw UserError("restart in place: the checkpoint was made from another executable (build id " + hex(p.build_id) +
                    ", this node runs " + hex(read_build_id(exe)) + ")");
  std::vector<Mapping> now = read_maps(pid);
  for (const ProcessMapping& m : p.mappings) {
    if (m.what != What::vdso && m.what != What::vvar && m.what != What::vsyscall && m.what != What::special) continue;
    bool same = false;
    for (const Mapping& n : now) same |= n.path == m.path && n.start == m.start && n.end == m.end;
    if (!same)
      throw UserError("restart in place: this process has no " + m.path + " at " + range(m.start, m.end) +
                      ": the nodes must run one kernel, without address randomisation");
  }
  struct {
    uint64_t pointer;
    uint32_t size, signature, flags, pad;
  } rseq{};
  if (::ptrace(static_cast<__ptrace_request>(0x420f), tid, sizeof rseq, &rseq) <= 0) rseq.pointer = 0;
  {
    StepSyscalls remote(tid);
    Rebuilder rb(pid, remote);
    uint64_t scratch = scratch_address(p, now);
    CAPE_LOG_AT(debug, "monitor") << "restart in place: scratch page at " << ckpt::hex_address(scratch);
    rb.call("mmap of a scratch page", SYS_mmap, static_cast<long>(scratch), kPageSize, PROT_READ | PROT_WRITE | PROT_EXEC,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    const uint8_t syscall_insn[2] = {0x0f, 0x05};
    rb.write(scratch, syscall_insn, 2);
    remote.set_gadget(scratch);
    rb.set_scratch(scratch + 64);
    // The kernel writes the rseq area at every return to user mode: unregistered before its
    // memory goes, registered again once the checkpoint's is there.
    if (rseq.pointer)
      rb.call("rseq unregistration", SYS_rseq, static_cast<long>(rseq.pointer), rseq.size, 1 /* RSEQ_FLAG_UNREGISTER */,
              rseq.signature);
    for (const Mapping& m : now) {
      What w = what_of(m);
      if (w == What::vdso || w == What::vvar || w == What::vsyscall || w == What::special) continue;
      if (m.start >= keep.first && m.start < keep.second) continue;  // the monitor's own
      CAPE_LOG_AT(debug, "monitor") << "restart in place: munmap " << range(m.start, m.end) << " " << m.path;
      rb.call("munmap " + range(m.start, m.end), SYS_munmap, static_cast<long>(m.start), static_cast<long>(m.end - m.start));
    }
    map_again(rb, p, exe, false, "restart in place");
    rb.close_files();
    if (p.layout.size() == 9) {
      uint64_t map[13] = {p.layout[0], p.layout[1], p.layout[2], p.layout[3], p.start_brk, p.brk, p.layout[4],
                          p.layout[5], p.layout[6], p.layout[7], p.layout[8], 0, 0};
      uint32_t* tail = reinterpret_cast<uint32_t*>(&map[12]);
      tail[0] = 0;
      tail[1] = 0xffffffff;
      rb.write(rb.scratch(), map, sizeof map);
      rb.call("setting the heap's place (PR_SET_MM_MAP, needs CAP_SYS_RESOURCE)", SYS_prctl, PR_SET_MM, PR_SET_MM_MAP,
              static_cast<long>(rb.scratch()), sizeof map);
    }
    injector::write_checkpoint(pid, c);
    if (p.tid_address) {
      uint32_t id = static_cast<uint32_t>(tid);
      rb.write(p.tid_address, &id, sizeof id);
    }
    for (const ckpt::ProcessSigaction& sa : p.sigactions) {
      uint64_t act[4] = {sa.handler, sa.flags, sa.restorer, sa.mask};
      rb.write(rb.scratch(), act, sizeof act);
      rb.call("rt_sigaction(" + std::to_string(sa.signo) + ")", SYS_rt_sigaction, sa.signo,
              static_cast<long>(rb.scratch()), 0, 8);
    }
    if (p.rseq_address)
      rb.call("rseq registration", SYS_rseq, static_cast<long>(p.rseq_address), p.rseq_length, 0, p.rseq_signature);
    rb.call("munmap of the scratch page", SYS_munmap, static_cast<long>(scratch), kPageSize);
    remote.restore();
  }
  if (!p.xstate.empty() && p.xstate.size() != sizeof(user_fpregs_struct)) {
    iovec iov{const_cast<uint8_t*>(p.xstate.data()), p.xstate.size()};
    if (::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0)
      fail_errno("PTRACE_SETREGSET");
  }
  user_regs_struct regs;
  std::memcpy(&regs, c.registers->bytes.data(), sizeof regs);
  return regs;
}

}  // namespace cape::monitor
