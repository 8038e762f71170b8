// cape-cc: a drop-in C compiler driver for OpenMP programs, like mpicc (docs/translator.md).
// Translates every .c argument with the CAPE templates into a private directory (same base
// name, so `-c x.c` still makes x.o), then runs $CC (default gcc) on the translated files
// with cape's headers and, when linking, libcape_cc and libcape.
//
//   cape-cc [--keep] [--model=single|mt] [--ckpt=dickpt|tickpt] [--master-idle] [-v] <gcc arguments>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cc_paths.h"  // generated: CAPE_BUILD_INCLUDES, CAPE_BUILD_LIBS, CAPE_INSTALL_LIBDIR
#include "driver.h"
#include "source_file.h"
#include "translate.h"

namespace fs = std::filesystem;

namespace {

struct Resources {
  std::vector<std::string> includes;
  std::vector<std::string> libs;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep))
    if (!x.empty()) r.push_back(x);
  return r;
}

// Installed: <prefix>/bin/cape-cc beside <prefix>/include and <prefix>/<libdir>. Else the
// build tree this binary came from (paths fixed at configure time).
bool find_resources(Resources& r, std::string& why) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    fs::path inc = prefix / "include", lib = prefix / CAPE_INSTALL_LIBDIR;
    if (fs::exists(inc / "cape/cc.h") && fs::exists(lib / "libcape_cc.a") && fs::exists(lib / "libcape.a")) {
      r.includes = {inc.string(), (inc / "cape/omp").string()};
      r.libs = {(lib / "libcape_cc.a").string(), (lib / "libcape.a").string()};
      return true;
    }
  }
  r.includes = split(CAPE_BUILD_INCLUDES, ';');
  r.libs = split(CAPE_BUILD_LIBS, ';');
  for (auto& l : r.libs)
    if (!fs::exists(l)) {
      why = "cannot find " + l + " (build the `cape_static` and `cape_cc` targets, or install cape)";
      return false;
    }
  return true;
}

int run(const std::vector<std::string>& argv, bool verbose) {
  if (verbose) {
    std::cerr << "cape-cc:";
    for (auto& a : argv) std::cerr << ' ' << a;
    std::cerr << '\n';
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "cape-cc: fork: " << std::strerror(errno) << '\n';
    return 1;
  }
  if (pid == 0) {
    execvp(args[0], args.data());
    std::cerr << "cape-cc: cannot run " << args[0] << ": " << std::strerror(errno) << '\n';
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "cape-cc: waitpid: " << std::strerror(errno) << '\n';
      return 1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void usage() {
  std::cout << "usage: cape-cc [--keep] [--model=single|mt] [--ckpt=dickpt|tickpt] [--master-idle] [-v] <gcc arguments>\n"
               "  Translates the OpenMP directives of every .c file into CAPE runtime calls,\n"
               "  then compiles with $CC (default gcc) and links libcape. Run the program\n"
               "  with `cape run -n N -- ./prog`.\n"
               "  --keep         keep each translated file as <name>.cape.c in the current directory\n"
               "  --model=single one process per node (default); mt is not implemented yet\n"
               "  --ckpt=dickpt  every write of a region travels (CAPE-2, the default)\n"
               "  --ckpt=tickpt  only shared, lastprivate, copyin, copyprivate and reduction\n"
               "                 data travel (002_2c61c2cb27f62a9a.txt, CAPE-TICKPT)\n"
               "  --master-idle  the master distributes and merges only (001 Fig. 3 exactly)\n"
               "  -v             show the translation notes and the commands run\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool keep = false, verbose = false;
  cape::tr::Options opts;
  // gcc options whose value is the next argument.
  static const std::set<std::string> with_value = {
      "-o", "-I", "-L", "-l", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
      "-idirafter", "-MF", "-MT", "-MQ", "-x", "-Xlinker", "-Xassembler", "-Xpreprocessor",
      "-T", "-u", "-z", "-aux-info", "--param", "-isysroot", "-iprefix", "-iwithprefix"};
  std::vector<std::string> gcc_args;
  std::vector<size_t> sources;  // indices into gcc_args
  bool link = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--keep") { keep = true; continue; }
    if (a == "--master-idle") { opts.master_idle = true; continue; }
    if (a == "-v") { verbose = true; continue; }
    if (a == "--help") { usage(); return 0; }
    if (a.rfind("--ckpt=", 0) == 0) {
      std::string m = a.substr(7);
      if (m != "dickpt" && m != "tickpt") {
        std::cerr << "cape-cc: unknown checkpoint model '" << m << "' (dickpt or tickpt)\n";
        return 2;
      }
      opts.tickpt = m == "tickpt";
      continue;
    }
    if (a.rfind("--model=", 0) == 0) {
      std::string m = a.substr(8);
      if (m == "single") continue;
      if (m == "mt") {
        std::cerr << "cape-cc: --model=mt (the two-level multithreaded template of "
                     "000_2e1115959baa0e7d.txt Fig. 6) is not implemented yet; use --model=single\n";
        return 2;
      }
      std::cerr << "cape-cc: unknown model '" << m << "' (single or mt)\n";
      return 2;
    }
    if (a == "-fopenmp" || a == "-fopenmp-simd") continue;  // CAPE is the OpenMP runtime here
    if (a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM") link = false;
    if (with_value.count(a) && i + 1 < argc) {
      gcc_args.push_back(a);
      gcc_args.push_back(argv[++i]);
      continue;
    }
    if (a.size() > 2 && a[0] != '-' && a.substr(a.size() - 2) == ".c") sources.push_back(gcc_args.size());
    gcc_args.push_back(a);
  }

  Resources res;
  std::string why;
  if (!find_resources(res, why)) {
    std::cerr << "cape-cc: " << why << '\n';
    return 1;
  }

  char tmpl[] = "/tmp/cape-cc.XXXXXX";
  const char* tmpdir_env = std::getenv("TMPDIR");
  std::string base = tmpdir_env && *tmpdir_env ? std::string(tmpdir_env) + "/cape-cc.XXXXXX" : tmpl;
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::cerr << "cape-cc: cannot make a temporary directory: " << std::strerror(errno) << '\n';
    return 1;
  }
  fs::path tmp = buf.data();

  int status = 0;
  std::vector<std::string> quote_dirs;
  std::set<std::string> used_names;
  for (size_t k = 0; k < sources.size() && status == 0; ++k) {
    std::string src = gcc_args[sources[k]];
    std::string text, why;
    if (!cape::tr::read_source(src, text, why)) {
      std::cerr << "cape-cc: cannot read '" << src << "': " << why << '\n';
      status = 1;
      break;
    }
    cape::tr::Driver drv(src, text);
    bool ok = drv.parse();
    std::string out;
    if (ok) out = cape::tr::translate(drv, opts);
    for (const auto& d : drv.diagnostics())
      if (d.level != cape::tr::Diagnostic::Note || verbose) std::cerr << drv.format(d);
    if (!ok || drv.has_errors()) {
      status = 1;
      break;
    }
    // Same base name so the object is named as gcc would; a subdirectory per clash.
    fs::path dir = tmp / std::to_string(k);
    fs::create_directories(dir);
    fs::path dst = dir / fs::path(src).filename();
    std::ofstream o(dst, std::ios::binary);
    o << out;
    o.close();
    if (!o) {
      std::cerr << "cape-cc: cannot write " << dst << '\n';
      status = 1;
      break;
    }
    if (keep) {
      fs::path kept = fs::path(src).stem().string() + ".cape.c";
      std::error_code ec;
      fs::copy_file(dst, kept, fs::copy_options::overwrite_existing, ec);
      if (verbose) std::cerr << "cape-cc: kept " << kept.string() << '\n';
    }
    if (verbose) std::cerr << "cape-cc: translated " << src << " -> " << dst.string() << '\n';
    // `#include "x.h"` looks beside the file first: the translated file lives elsewhere.
    std::string sd = fs::path(src).parent_path().string();
    quote_dirs.push_back(sd.empty() ? "." : sd);
    gcc_args[sources[k]] = dst.string();
  }

  if (status == 0) {
    const char* cc_env = std::getenv("CC");
    std::vector<std::string> cmd = split(cc_env && *cc_env ? cc_env : "gcc", ' ');
    for (auto& d : quote_dirs) { cmd.push_back("-iquote"); cmd.push_back(d); }
    for (auto& i : res.includes) cmd.push_back("-I" + i);
    cmd.push_back("-D_OPENMP=201107");
    cmd.insert(cmd.end(), gcc_args.begin(), gcc_args.end());
    if (link) {
      cmd.insert(cmd.end(), res.libs.begin(), res.libs.end());
      // Symbols bound at start-up, not at their first call: a lazy binding writes the GOT
      // (tracked memory) on the node that calls the function first, so nodes would differ
      // (and carry GOT words in their checkpoints) for nothing.
      cmd.push_back("-Wl,-z,now");
    }
    status = run(cmd, verbose);
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return status;
}
