#include "cli/program_check.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::cli {
namespace {

// `len` bytes at `off` of the file, or empty when the file is shorter.
std::string read_at(int fd, uint64_t off, uint64_t len) {
  if (len > (64u << 20)) return {};
  std::string s(len, '\0');
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, s.data() + done, len - done, static_cast<off_t>(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    done += static_cast<size_t>(n);
  }
  return s;
}

template <class T>
bool read_struct(int fd, uint64_t off, T& out) {
  std::string s = read_at(fd, off, sizeof(T));
  if (s.size() != sizeof(T)) return false;
  std::memcpy(&out, s.data(), sizeof(T));
  return true;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string find_program(const std::string& prog) {
  auto cannot = [&](int e) {
    throw UserError("cannot run " + prog + ": " + std::strerror(e), e == ENOENT || e == ENOTDIR ? 127 : 126);
  };
  auto runnable = [](const std::string& path) -> int {  // 0, or why not
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (prog.empty()) cannot(ENOENT);
  if (prog.find('/') != std::string::npos) {
    if (int e = runnable(prog)) cannot(e);
    return prog;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  int found_but = 0;  // as execvp: a match that cannot run is reported if nothing else runs
  for (size_t from = 0;;) {
    size_t colon = dirs.find(':', from);
    std::string dir = dirs.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
    int e = runnable(candidate);
    if (e == 0) return candidate;
    if (e != ENOENT && e != ENOTDIR) found_but = e;
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  cannot(found_but ? found_but : ENOENT);
  return {};
}

// libcape is in the executable (cape-cc links libcape.a: its section .cape.libcape,
// runtime/src/cape.c) or a library it needs (libcape.so). Section headers survive `strip`.
ProgramKind program_kind(const std::string& path) {
  util::ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ProgramKind::not_elf;  // the run says why
  Elf64_Ehdr eh;
  if (!read_struct(fd.get(), 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return ProgramKind::not_elf;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) return ProgramKind::plain;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::string table = read_at(fd.get(), eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr));
  if (table.size() != sections.size() * sizeof(Elf64_Shdr)) return ProgramKind::plain;
  std::memcpy(sections.data(), table.data(), table.size());
  auto contents = [&](const Elf64_Shdr& s) {
    return s.sh_type == SHT_NOBITS ? std::string() : read_at(fd.get(), s.sh_offset, s.sh_size);
  };
  std::string names = eh.e_shstrndx < sections.size() ? contents(sections[eh.e_shstrndx]) : "";
  auto name_at = [](const std::string& strtab, uint64_t off) -> std::string_view {
    if (off >= strtab.size()) return {};
    return std::string_view(strtab.c_str() + off);
  };
  bool openmp = false;
  for (const Elf64_Shdr& s : sections) {
    if (name_at(names, s.sh_name) == ".cape.libcape") return ProgramKind::cape;
    if (s.sh_type != SHT_DYNAMIC || s.sh_link >= sections.size()) continue;
    std::string dyn = contents(s), strtab = contents(sections[s.sh_link]);
    for (size_t off = 0; off + sizeof(Elf64_Dyn) <= dyn.size(); off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, dyn.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED) continue;
      std::string_view lib = name_at(strtab, d.d_un.d_val);
      if (starts_with(lib, "libcape.so")) return ProgramKind::cape;
      if (starts_with(lib, "libgomp.so") || starts_with(lib, "libomp.so") || starts_with(lib, "libiomp5.so"))
        openmp = true;
    }
  }
  return openmp ? ProgramKind::plain_openmp : ProgramKind::plain;
}

void require_libcape(const std::string& prog, const std::string& path, int nodes) {
  ProgramKind kind = program_kind(path);
  if (kind == ProgramKind::cape || kind == ProgramKind::not_elf) return;
  std::string n = std::to_string(nodes);
  std::string what = kind == ProgramKind::plain_openmp
                         ? " was built with OpenMP (it needs libgomp) but not with cape-cc"
                         : " was not built with cape-cc (it holds no libcape)";
  std::string alone = nodes == 1 ? "it would run outside CAPE" : "each of the " + n + " nodes would run the whole program alone";
  throw UserError(prog + what + ": " + alone +
                      ". Build it with cape-cc, as you would with mpicc (cape-cc -O2 prog.c -o prog), or give "
                      "--any-program to run it on every node anyway",
                  1);
}

}  // namespace cape::cli
