#include "monitor/complete.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "ckpt/hash.h"
#include "ckpt/process_image.h"
#include "monitor/memory_map.h"
#include "monitor/pagemap.h"
#include "monitor/tracee.h"  // kPageSize
#include "monitor/step_syscall.h"
#include "protocol.h"  // CAPE_RUNTIME_HEAP_BASE
#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::monitor {
namespace {

using ckpt::ProcessMapping;
constexpr long kPtraceGetRseqConfiguration = 0x420f;
constexpr uint64_t kGlibcTidOffset = 0x2d0;  // offsetof(struct pthread, tid), glibc 2.34-2.40 on x86_64
constexpr uint64_t kChunk = 4 << 20;

std::string proc(pid_t pid, const std::string& what) { return "/proc/" + std::to_string(pid) + "/" + what; }

std::string read_link(const std::string& path) {
  std::string out(4096, '\0');
  ssize_t n = ::readlink(path.c_str(), out.data(), out.size());
  if (n < 0) throw UserError("cannot read " + path + ": " + std::strerror(errno));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t status_mask(const std::string& status, const char* field) {
  size_t at = status.find(std::string("\n") + field + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + std::strlen(field) + 2, nullptr, 16);
}

// libcape's runtimes' heap (runtime/src/heap_runtime.c: libgomp's and ld.so's blocks): a
// MAP_SHARED anonymous reservation, which the kernel names after /dev/zero. It is private to
// the process like any anonymous memory: kept (its populated pages), and mapped shared again.
bool runtimes_heap(const Mapping& m) {
  return m.shared && m.start == CAPE_RUNTIME_HEAP_BASE && m.path.rfind("/dev/zero", 0) == 0;
}

ProcessMapping::What classify(const Mapping& m) {
  const std::string& p = m.path;
  if (p.empty() || p.rfind("[anon:", 0) == 0 || runtimes_heap(m)) return ProcessMapping::What::anon;
  if (p == "[heap]") return ProcessMapping::What::heap;
  if (p == "[stack]") return ProcessMapping::What::stack;
  if (p == "[vdso]") return ProcessMapping::What::vdso;
  if (p == "[vvar]" || p == "[vvar_vclock]") return ProcessMapping::What::vvar;
  if (p == "[vsyscall]") return ProcessMapping::What::vsyscall;
  if (p[0] == '/') return ProcessMapping::What::file;
  return ProcessMapping::What::special;
}

bool kernel_owned(ProcessMapping::What w) {
  return w == ProcessMapping::What::vdso || w == ProcessMapping::What::vvar || w == ProcessMapping::What::vsyscall ||
         w == ProcessMapping::What::special;
}

// A system call interrupted by the stop would be restarted by the kernel on the way out;
// a new process must make it again itself: back to the syscall instruction.
user_regs_struct restartable(user_regs_struct r) {
  auto ret = static_cast<long long>(r.rax);
  if (static_cast<long long>(r.orig_rax) >= 0 && (ret == -512 || ret == -513 || ret == -514 || ret == -516)) {
    r.rax = r.orig_rax;
    r.rip -= 2;
  }
  r.orig_rax = static_cast<unsigned long long>(-1);
  return r;
}

void pread_all(int fd, uint8_t* to, size_t n, uint64_t at, const std::string& what) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, to + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw UserError("cannot read " + what + " at " + ckpt::hex_address(at + done) + ": " +
                                (r < 0 ? std::strerror(errno) : "end of file"));
    done += static_cast<size_t>(r);
  }
}

// Descriptors 3 and up: read-only regular files are recorded (reopened by path and offset on
// restart); anything else is refused.
std::vector<ckpt::ProcessFd> open_files(pid_t pid) {
  std::vector<ckpt::ProcessFd> out;
  std::string dir = proc(pid, "fd");
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw UserError("cannot list " + dir + ": " + std::strerror(errno));
  std::vector<int> fds;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') fds.push_back(std::atoi(e->d_name));
  ::closedir(d);
  std::sort(fds.begin(), fds.end());
  for (int fd : fds) {
    if (fd < 3) continue;
    std::string link = dir + "/" + std::to_string(fd);
    std::string target = read_link(link);
    std::string info = read_text(proc(pid, "fdinfo/" + std::to_string(fd)));
    ckpt::ProcessFd f;
    f.fd = fd;
    size_t at = info.find("pos:");
    if (at != std::string::npos) f.offset = std::strtoull(info.c_str() + at + 4, nullptr, 10);
    at = info.find("flags:");
    if (at != std::string::npos) f.flags = static_cast<uint32_t>(std::strtoul(info.c_str() + at + 6, nullptr, 8));
    struct stat st;
    bool regular = ::stat(link.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    // Devices without state are reopened by path too, in their access mode.
    if (target == "/dev/null" || target == "/dev/zero" || target == "/dev/urandom" || target == "/dev/random" ||
        target == "/dev/full") {
      f.path = target;
      out.push_back(std::move(f));
      continue;
    }
    bool deleted = target.size() > 10 && target.compare(target.size() - 10, 10, " (deleted)") == 0;
    if (!regular || deleted || (f.flags & O_ACCMODE) != O_RDONLY || target.empty() || target[0] != '/')
      throw UserError("process " + std::to_string(pid) + " has descriptor " + std::to_string(fd) + " open on " + target +
                      ((f.flags & O_ACCMODE) != O_RDONLY && regular ? " for writing" : "") +
                      ": a complete checkpoint reconnects the standard streams and reopens read-only regular files "
                      "(by path, at their offset) only; close it before the checkpoint");
    f.path = target;
    out.push_back(std::move(f));
  }
  return out;
}

class MemoryReader {
 public:
  MemoryReader(pid_t pid, ckpt::Checkpoint& c) : pid_(pid), c_(c) {
    mem_.reset(::open(proc(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC));
    if (!mem_.valid()) throw UserError("cannot open " + proc(pid, "mem") + ": " + std::strerror(errno));
    pagemap_.reset(::open(proc(pid, "pagemap").c_str(), O_RDONLY | O_CLOEXEC));
  }

  // Adds the populated pages of `m` that `keep` selects.
  void add(const Mapping& m, ProcessMapping::What what) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    // A writable file mapping (.data) whole: a page not yet touched reads as the file, not as
    // zeros, and a diff against a later checkpoint must compare it with that (CAPE-1's diff).
    if (what == ProcessMapping::What::file && m.write) {
      ranges = {{m.start, m.end}};
    } else if (!pagemap_.valid() || !populated_ranges(pagemap_.get(), m.start, m.end, ranges)) {
      if (!m.read && !m.write && m.end - m.start > (64 << 20))
        throw UserError("cannot tell which pages of the inaccessible mapping " + ckpt::hex_address(m.start) + "-" +
                        ckpt::hex_address(m.end) + " hold data (PAGEMAP_SCAN needs Linux 6.7)");
      ranges = {{m.start, m.end}};
    }
    util::ScopedFd file;
    bool compare = what == ProcessMapping::What::file && !m.write;
    if (compare) {
      file.reset(::open(m.path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!file.valid()) throw UserError("cannot read " + m.path + " (mapped by the program): " + std::strerror(errno));
    }
    for (auto [s, e] : ranges) {
      for (uint64_t at = s; at < e; at += kChunk) {
        size_t n = static_cast<size_t>(std::min(kChunk, e - at));
        buf_.resize(n);
        pread_all(mem_.get(), buf_.data(), n, at, "the memory of process " + std::to_string(pid_));
        if (!compare) {
          c_.append(at, {buf_.data(), n}, 0);
          continue;
        }
        file_buf_.assign(n, 0);
        ssize_t got = ::pread(file.get(), file_buf_.data(), n, static_cast<off_t>(m.offset + (at - m.start)));
        (void)got;  // past the end of the file: zeros, as the mapping reads
        for (size_t p = 0; p < n; p += kPageSize)
          if (std::memcmp(buf_.data() + p, file_buf_.data() + p, kPageSize) != 0)
            c_.append(at + p, {buf_.data() + p, kPageSize}, 0);
      }
    }
  }

 private:
  pid_t pid_;
  ckpt::Checkpoint& c_;
  util::ScopedFd mem_, pagemap_;
  std::vector<uint8_t> buf_, file_buf_;
};

}  // namespace

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

void hash_file(const std::string& path, uint64_t& size, uint64_t& hash) {
  util::ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw UserError("cannot read " + path + ": " + std::strerror(errno));
  ckpt::Hasher h;
  std::vector<uint8_t> buf(1 << 20);
  size = 0;
  for (;;) {
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UserError("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
    size += static_cast<uint64_t>(n);
  }
  hash = h.digest();
}

std::vector<uint8_t> read_build_id(const std::string& path) {
  util::ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw UserError("cannot read " + path + ": " + std::strerror(errno));
  Elf64_Ehdr eh;
  if (::pread(fd.get(), &eh, sizeof eh, 0) != sizeof eh || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 4096)
    throw UserError(path + " is not a 64-bit ELF executable");
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  ssize_t want = static_cast<ssize_t>(ph.size() * sizeof(Elf64_Phdr));
  if (::pread(fd.get(), ph.data(), static_cast<size_t>(want), static_cast<off_t>(eh.e_phoff)) != want)
    throw UserError(path + ": truncated program headers");
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type != PT_NOTE || p.p_filesz > (1 << 20)) continue;
    std::vector<uint8_t> notes(p.p_filesz);
    if (::pread(fd.get(), notes.data(), notes.size(), static_cast<off_t>(p.p_offset)) != static_cast<ssize_t>(notes.size()))
      continue;
    size_t at = 0;
    while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
      Elf64_Nhdr n;
      std::memcpy(&n, notes.data() + at, sizeof n);
      size_t name = at + sizeof n, desc = name + ((n.n_namesz + 3) & ~3u), next = desc + ((n.n_descsz + 3) & ~3u);
      if (next > notes.size()) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(notes.data() + name, "GNU", 4) == 0)
        return {notes.begin() + static_cast<long>(desc), notes.begin() + static_cast<long>(desc + n.n_descsz)};
      at = next;
    }
  }
  return {};
}

ckpt::Checkpoint take_complete(pid_t pid, const CompleteOptions& options, CompleteStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  {
    size_t threads = 0;
    DIR* d = ::opendir(proc(pid, "task").c_str());
    if (!d) throw UserError("no process " + std::to_string(pid));
    while (dirent* e = ::readdir(d)) threads += e->d_name[0] != '.';
    ::closedir(d);
    if (threads != 1)
      throw UserError("process " + std::to_string(pid) + " has " + std::to_string(threads) +
                      " threads: complete checkpoints (CAPE-1) hold one thread only");
  }
  ckpt::ProcessImage p;
  p.pid = static_cast<uint32_t>(pid);
  user_regs_struct regs;
  if (::ptrace(PTRACE_GETREGS, pid, nullptr, &regs) != 0) fail_errno("PTRACE_GETREGS");
  {
    std::vector<uint8_t> xs(16384);
    iovec iov{xs.data(), xs.size()};
    if (::ptrace(PTRACE_GETREGSET, pid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0) {
      xs.resize(iov.iov_len);
      p.xstate = std::move(xs);
    } else {
      xs.resize(sizeof(user_fpregs_struct));
      if (::ptrace(PTRACE_GETFPREGS, pid, nullptr, xs.data()) != 0) fail_errno("PTRACE_GETFPREGS");
      p.xstate = std::move(xs);  // (restart tells the two apart by size)
    }
    struct {
      uint64_t pointer;
      uint32_t size, signature, flags, pad;
    } rseq{};
    if (::ptrace(static_cast<__ptrace_request>(kPtraceGetRseqConfiguration), pid, sizeof rseq, &rseq) > 0 && rseq.pointer) {
      p.rseq_address = rseq.pointer;
      p.rseq_length = rseq.size;
      p.rseq_signature = rseq.signature;
    }
  }

  p.exe = read_link(proc(pid, "exe"));
  p.build_id = read_build_id(proc(pid, "exe"));
  hash_file(proc(pid, "exe"), p.exe_size, p.exe_hash);
  p.cwd = read_link(proc(pid, "cwd"));
  std::string status = read_text(proc(pid, "status"));
  p.sig_blocked = status_mask(status, "SigBlk");
  p.sig_ignored = status_mask(status, "SigIgn");
  uint64_t caught = status_mask(status, "SigCgt");
  {
    std::string stat = read_text(proc(pid, "stat"));
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::string field;
    std::vector<uint64_t> f(53, 0);
    for (int i = 3; i <= 51 && in >> field; ++i) f[static_cast<size_t>(i)] = std::strtoull(field.c_str(), nullptr, 10);
    p.start_brk = f[47];
    p.layout = {f[26], f[27], f[45], f[46], f[28], f[48], f[49], f[50], f[51]};
  }
  p.fds = open_files(pid);

  std::vector<Mapping> maps = read_maps(pid);
  std::erase_if(maps, [&](const Mapping& m) {
    for (auto [s, e] : options.skip)
      if (m.start >= s && m.start < e) return true;
    return false;
  });
  p.under_monitor = options.under_monitor;
  std::map<std::string, bool> files;
  for (const Mapping& m : maps) {
    ProcessMapping pm;
    pm.start = m.start;
    pm.end = m.end;
    pm.offset = m.offset;
    pm.prot = static_cast<uint8_t>((m.read ? PROT_READ : 0) | (m.write ? PROT_WRITE : 0) | (m.exec ? PROT_EXEC : 0));
    pm.shared = m.shared;
    pm.what = classify(m);
    pm.path = m.path;
    std::string where = " at " + ckpt::hex_address(m.start) + "-" + ckpt::hex_address(m.end);
    if (m.shared && !kernel_owned(pm.what) && !runtimes_heap(m))
      throw UserError("process " + std::to_string(pid) + " has a shared mapping (" +
                      (m.path.empty() ? std::string("anonymous") : m.path) + where +
                      "): complete checkpoints restore private memory only");
    if (pm.what == ProcessMapping::What::file && m.path.size() > 10 &&
        m.path.compare(m.path.size() - 10, 10, " (deleted)") == 0)
      throw UserError("process " + std::to_string(pid) + " maps a deleted file (" + m.path + where +
                      "): a restart could not map it again");
    if (pm.what == ProcessMapping::What::file) files[m.path] = true;
    p.mappings.push_back(std::move(pm));
  }
  for (const auto& [path, unused] : files) {
    ckpt::ProcessFile f;
    f.path = path;
    hash_file(path, f.size, f.hash);
    p.files.push_back(std::move(f));
  }

  // Kernel state a restart would not have: refused rather than lost.
  {
    std::string children;
    std::ifstream in(proc(pid, "task/" + std::to_string(pid) + "/children"));
    std::getline(in, children);
    if (children.find_first_not_of(' ') != std::string::npos)
      throw UserError("process " + std::to_string(pid) + " has child processes (" + children +
                      "): a restarted process would not have them");
    std::string timers = read_text(proc(pid, "timers"));
    if (!timers.empty())
      throw UserError("process " + std::to_string(pid) +
                      " has POSIX timers (timer_create): a complete checkpoint does not restore them");
  }
  // What only the program's own system calls tell: the exact break, its signal handlers,
  // and whether it has an interval timer, an alarm or an alternate signal stack (refused).
  {
    StepSyscalls remote(pid);
    long brk = remote.syscall(SYS_brk, 0);
    if (brk < 0) throw UserError("brk(0) failed in process " + std::to_string(pid));
    p.brk = static_cast<uint64_t>(brk);
    uint64_t scratch = (remote.saved().rsp - 512) & ~uint64_t{15};
    uint8_t old[32];
    util::ScopedFd mem(::open(proc(pid, "mem").c_str(), O_RDWR | O_CLOEXEC));
    if (!mem.valid() || ::pread(mem.get(), old, sizeof old, static_cast<off_t>(scratch)) != sizeof old)
      throw UserError("cannot read the stack of process " + std::to_string(pid));
    for (int which = 0; which < 3; ++which) {  // ITIMER_REAL (alarm too), _VIRTUAL, _PROF
      uint64_t it[4] = {};
      if (remote.syscall(SYS_getitimer, which, static_cast<long>(scratch)) == 0 &&
          ::pread(mem.get(), it, sizeof it, static_cast<off_t>(scratch)) == sizeof it && (it[2] || it[3] || it[0] || it[1])) {
        (void)!::pwrite(mem.get(), old, sizeof old, static_cast<off_t>(scratch));
        throw UserError("process " + std::to_string(pid) + " has an interval timer or an alarm set (" +
                        (which == 0 ? "ITIMER_REAL" : which == 1 ? "ITIMER_VIRTUAL" : "ITIMER_PROF") +
                        "): a complete checkpoint does not restore it");
      }
    }
    uint64_t ss[3] = {};
    if (remote.syscall(SYS_sigaltstack, 0, static_cast<long>(scratch)) == 0 &&
        ::pread(mem.get(), ss, sizeof ss, static_cast<off_t>(scratch)) == sizeof ss &&
        !(static_cast<uint32_t>(ss[1]) & SS_DISABLE)) {
      (void)!::pwrite(mem.get(), old, sizeof old, static_cast<off_t>(scratch));
      throw UserError("process " + std::to_string(pid) +
                      " has an alternate signal stack (sigaltstack): a complete checkpoint does not restore it");
    }
    for (uint32_t sig = 1; sig <= 64; ++sig) {
      if (!(caught >> (sig - 1) & 1)) continue;
      long r = remote.syscall(SYS_rt_sigaction, sig, 0, static_cast<long>(scratch), 8);
      if (r < 0) throw UserError("rt_sigaction(" + std::to_string(sig) + ") failed in process " + std::to_string(pid));
      uint64_t act[4];
      if (::pread(mem.get(), act, sizeof act, static_cast<off_t>(scratch)) != sizeof act)
        throw UserError("cannot read the stack of process " + std::to_string(pid));
      p.sigactions.push_back({sig, act[0], act[1], act[2], act[3]});
    }
    if (::pwrite(mem.get(), old, sizeof old, static_cast<off_t>(scratch)) != sizeof old)
      fail_errno("restoring the stack of process " + std::to_string(pid));
    remote.restore();
  }

  ckpt::Checkpoint c;
  c.kind = ckpt::Kind::complete;
  c.name = options.name;
  c.node = options.node;
  c.sequence = options.sequence;
  c.timestamp = options.timestamp;
  c.load_base = load_base(maps, p.exe);
  user_regs_struct resume = options.resume_registers ? *options.resume_registers : restartable(regs);
  resume.orig_rax = static_cast<unsigned long long>(-1);
  c.registers = ckpt::Registers{ckpt::Arch::x86_64, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&resume),
                                                                        reinterpret_cast<uint8_t*>(&resume) + sizeof resume)};
  CompleteStats s;
  MemoryReader reader(pid, c);
  for (size_t i = 0; i < maps.size(); ++i) {
    const Mapping& m = maps[i];
    ProcessMapping::What what = p.mappings[i].what;
    if (kernel_owned(what)) {
      if (what == ProcessMapping::What::vdso) {
        std::vector<uint8_t> code(m.end - m.start);
        util::ScopedFd mem(::open(proc(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC));
        pread_all(mem.get(), code.data(), code.size(), m.start, "the [vdso]");
        p.vdso_hash = ckpt::hash64(code);
      }
      continue;
    }
    if (m.read || m.write || m.exec) s.mapped_bytes += m.end - m.start;
    if (m.write) s.writable_bytes += m.end - m.start;
    reader.add(m, what);
  }
  // glibc caches the thread id in its thread descriptor; a restart writes the new one there.
  if (regs.fs_base) {
    uint32_t tid = 0;
    if (const uint8_t* b = c.at(regs.fs_base + kGlibcTidOffset); b && c.at(regs.fs_base + kGlibcTidOffset + 3)) {
      std::memcpy(&tid, b, 4);
      if (tid == static_cast<uint32_t>(pid)) p.tid_address = regs.fs_base + kGlibcTidOffset;
    }
  }
  // The main thread's block, as the tracked set leaves it out (monitor/address_space.cpp):
  // the static TLS blocks below fs_base (from the DTV) to the page after the descriptor.
  if (regs.fs_base) {
    uint64_t low = regs.fs_base;
    auto word = [&](uint64_t a) -> std::optional<uint64_t> {
      const uint8_t* b = c.at(a);
      if (!b || !c.at(a + 7)) return std::nullopt;
      uint64_t v;
      std::memcpy(&v, b, 8);
      return v;
    };
    if (auto dtv = word(regs.fs_base + 8); dtv && *dtv >= 16)
      if (auto len = word(*dtv - 16))
        for (uint64_t i = 1; i <= std::min<uint64_t>(*len, 256); ++i)
          if (auto block = word(*dtv + 16 * i);
              block && *block && *block != ~uint64_t{0} && *block < regs.fs_base && regs.fs_base - *block < (1 << 20))
            low = std::min(low, *block);
    p.thread_block_low = (low & ~uint64_t{4095}) - (low == regs.fs_base ? 4096 : 0);
    p.thread_block_high = (regs.fs_base & ~uint64_t{4095}) + 8192;
  }
  c.process = ckpt::encode_process(p);
  s.mappings = maps.size();
  s.stored_bytes = c.memory_bytes();
  s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (stats) *stats = s;
  return c;
}

}  // namespace cape::monitor
