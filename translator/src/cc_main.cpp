// cape-cc: a drop-in C compiler driver for OpenMP programs, like mpicc (docs/translator.md).
// For every .c argument: `$CC -E` with the user's preprocessing flags and -fopenmp's
// _OPENMP (toolchain.h), the CAPE translation of that unit into a private directory (same
// base name, so `-c x.c` still makes x.o), then $CC (default gcc) on the translated files
// with cape's headers and, when linking, libcape_cc and libcape.
//
//   cape-cc [--keep] [--model=single|cape1|mt] [--ckpt=dickpt|tickpt] [--master-idle] [-v] [-show] <gcc arguments>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "driver.h"
#include "source_file.h"
#include "toolchain.h"
#include "translate.h"

namespace fs = std::filesystem;
using namespace cape::tr;

namespace {

void usage() {
  std::cout << "usage: cape-cc [--keep] [--model=single|cape1|mt] [--ckpt=dickpt|tickpt] [--master-idle] [-v] [-show] <gcc arguments>\n"
               "  Preprocesses every .c file ($CC -E, with -fopenmp's _OPENMP), translates its OpenMP\n"
               "  directives into CAPE runtime calls, then compiles with $CC (default gcc) and links\n"
               "  libcape. Run the program with `cape run -n N ./prog` (as with mpicc and mpirun).\n"
               "  --keep         keep <name>.cape.c (the translation of the source as written, for\n"
               "                 reading) and <name>.cape.pp.c (the translation compiled)\n"
               "  --model=single one process per node (default)\n"
               "  --model=mt     each node runs its share of a region with OpenMP threads (Do et al.,\n"
               "                 ETRI J. 2020, Fig. 6; `cape run --threads-per-node`)\n"
               "  --model=cape1  CAPE-1's complete checkpoints (Ha and Renault, HPCC 2011, Fig. 2;\n"
               "                 parallel for and parallel sections only)\n"
               "  --ckpt=dickpt  every write of a region travels (CAPE-2, the default)\n"
               "  --ckpt=tickpt  only shared, lastprivate, copyin, copyprivate and reduction\n"
               "                 data travel (CAPE-TICKPT: Tran et al., SoICT 2018)\n"
               "  --master-idle  the master distributes and merges only (Tran et al., ScalCom 2016, Fig. 3)\n"
               "  -v             show the translation notes and the commands run\n"
               "  -show, --showme  print the commands without running them (as mpicc does)\n"
               "  --version      cape's version and the C compiler's\n";
}

// The dependency options (-MD, -MMD, -MF f, -MT t, -MQ t, -MP) belong to the preprocessing:
// the compile of the translation would name the temporary file.
bool dependency_option(const std::string& a) {
  return a == "-MD" || a == "-MMD" || a == "-MF" || a == "-MT" || a == "-MQ" || a == "-MP" || a.rfind("-MF", 0) == 0 ||
         a.rfind("-MT", 0) == 0 || a.rfind("-MQ", 0) == 0;
}

// The temporary directory goes whatever way main returns.
struct Cleanup {
  fs::path dir;
  bool made = false;
  ~Cleanup() {
    std::error_code ec;
    if (made) fs::remove_all(dir, ec);
  }
};

// A file the compile of the translation reads besides the translated ones that may need
// the preprocessing flags too (assembly to preprocess, C++, a .c given with -x...): then
// they are kept.
bool needs_preprocessing(const std::string& a) {
  if (a.empty() || a[0] == '-') return false;
  std::string ext = fs::path(a).extension().string();
  return !(ext == ".c" || ext == ".o" || ext == ".a" || ext == ".so" || ext == ".s" || ext == ".lo");
}

// Translates a parsed unit; prints the diagnostics; false on errors.
bool translate_unit(Driver& drv, const Options& opts, bool verbose, std::string& out) {
  bool ok = drv.parse();
  if (ok) out = translate(drv, opts);
  drv.print(std::cerr, verbose);
  return ok && !drv.has_errors();
}

}  // namespace

int main(int argc, char** argv) {
  bool keep = false, verbose = false, show = false;
  Options opts;
  // gcc options whose value is the next argument.
  static const std::set<std::string> with_value = {
      "-o", "-I", "-L", "-l", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
      "-idirafter", "-MF", "-MT", "-MQ", "-x", "-Xlinker", "-Xassembler", "-Xpreprocessor",
      "-T", "-u", "-z", "-aux-info", "--param", "-isysroot", "-iprefix", "-iwithprefix",
      "-iwithprefixbefore"};
  std::vector<std::string> gcc_args;     // everything for the compile, sources in place
  std::vector<std::string> pp_flags;     // what the preprocessing takes of them
  std::vector<size_t> sources;           // indices into gcc_args
  bool link = true, preprocess_only = false, any_input = false, deps = false, dep_file = false, dep_target = false;
  std::string output;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--keep") { keep = true; continue; }
    if (a == "--master-idle") { opts.master_idle = true; continue; }
    if (a == "-v") { verbose = true; continue; }
    if (a == "-show" || a == "--showme" || a == "-showme") { show = true; continue; }
    if (a == "--help") { usage(); return 0; }
    if (a == "--version") {
      std::cout << version_text("cape-cc");
      std::vector<std::string> cc = c_compiler();
      cc.push_back("--version");
      return run_command(cc, false);
    }
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
      if (m == "single" || m == "mt") {
        opts.mt = m == "mt";
        opts.cape1 = false;
        continue;
      }
      if (m == "cape1") {  // 003 Fig. 2: complete checkpoints (docs/cape1.md)
        opts.cape1 = true;
        opts.mt = false;
        continue;
      }
      std::cerr << "cape-cc: unknown model '" << m << "' (single, cape1 or mt)\n";
      return 2;
    }
    if (a == "-fopenmp" || a == "-fopenmp-simd") continue;  // CAPE is the OpenMP runtime here
    if (a == "-c" || a == "-S") link = false;
    if (a == "-E" || a == "-M" || a == "-MM") link = false, preprocess_only = true;
    if (a == "-MD" || a == "-MMD") deps = true;
    if (a.rfind("-MF", 0) == 0) dep_file = true;
    if (a.rfind("-MT", 0) == 0 || a.rfind("-MQ", 0) == 0) dep_target = true;
    bool takes_value = false;
    bool pp = preprocessor_option(a, takes_value) || dependency_option(a);
    if ((with_value.count(a) || takes_value) && i + 1 < argc) {
      if (a == "-o") output = argv[i + 1];
      if (a == "-l") any_input = true;
      if (pp) pp_flags.insert(pp_flags.end(), {a, argv[i + 1]});
      gcc_args.push_back(a);
      gcc_args.push_back(argv[++i]);
      continue;
    }
    if (pp) pp_flags.push_back(a);
    if (a.empty() || a[0] != '-' || a.rfind("-l", 0) == 0) any_input = true;
    if (a.size() > 2 && a[0] != '-' && a.substr(a.size() - 2) == ".c") sources.push_back(gcc_args.size());
    gcc_args.push_back(a);
  }
  if (!any_input) {
    std::cerr << "cape-cc: fatal error: no input files\ncompilation terminated.\n";
    return 1;
  }

  Resources res;
  std::string why;
  if (!find_resources(res, !preprocess_only, why)) {
    std::cerr << "cape-cc: " << why << '\n';
    return 1;
  }
  install_interrupt_handlers();

  // -E, -M, -MM: the user's source as cape-cc preprocesses it (cape's omp.h, _OPENMP).
  if (preprocess_only) {
    std::vector<std::string> cmd = c_compiler();
    for (auto& i : res.includes) cmd.insert(cmd.end(), {"-isystem", i});
    cmd.push_back("-fopenmp");
    cmd.insert(cmd.end(), gcc_args.begin(), gcc_args.end());
    int st = run_command(cmd, verbose, show);
    if (int sig = interrupted()) die_of_signal(sig);
    return st;
  }

  Cleanup tmp;
  if (show) {
    tmp.dir = fs::path(std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") / "cape-cc.XXXXXX";
  } else {
    const char* tmpdir_env = std::getenv("TMPDIR");
    std::string base = std::string(tmpdir_env && *tmpdir_env ? tmpdir_env : "/tmp") + "/cape-cc.XXXXXX";
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      std::cerr << "cape-cc: cannot make a temporary directory in " << base.substr(0, base.size() - 15) << ": "
                << std::strerror(errno) << " (set TMPDIR to a writable directory)\n";
      return 1;
    }
    tmp.dir = buf.data();
    tmp.made = true;
  }
  auto stop_if_interrupted = [&] {
    if (int sig = interrupted()) {
      std::error_code ec;
      if (tmp.made) fs::remove_all(tmp.dir, ec);
      tmp.made = false;
      die_of_signal(sig);
    }
  };

  int status = 0;
  for (size_t k = 0; k < sources.size() && status == 0; ++k) {
    std::string src = gcc_args[sources[k]];
    // Same base name so the object is named as gcc would; a subdirectory per clash.
    fs::path dir = tmp.dir / std::to_string(k);
    fs::path pre = dir / (fs::path(src).stem().string() + ".i"), dst = dir / fs::path(src).filename();
    std::vector<std::string> flags = pp_flags;
    // -MD/-MMD without -MF/-MT: the names gcc would give (from the object, not from the
    // preprocessed file's -o).
    if (deps) {
      fs::path obj = !link && !output.empty() && sources.size() == 1 ? fs::path(output)
                                                                     : fs::path(fs::path(src).stem().string() + ".o");
      if (!dep_file) flags.insert(flags.end(), {"-MF", fs::path(obj).replace_extension(".d").string()});
      if (!dep_target) flags.insert(flags.end(), {"-MT", obj.string()});
    }
    if (!show) fs::create_directories(dir);
    status = run_command(preprocess_command(res, flags, src, pre.string()), verbose, show);
    stop_if_interrupted();
    if (status != 0) break;
    if (show) {
      std::cout << "cape-translate --preprocessed" << (opts.tickpt ? " --ckpt=tickpt" : "") << (opts.mt ? " --model=mt" : "") << (opts.cape1 ? " --model=cape1" : "")
                << (opts.master_idle ? " --master-idle" : "") << " --name " << src << ' ' << pre.string() << " -o "
                << dst.string() << '\n';
      gcc_args[sources[k]] = dst.string();
      continue;
    }
    std::string text;
    if (!read_file(pre.string(), text)) {
      std::cerr << "cape-cc: cannot read " << pre.string() << ": " << std::strerror(errno) << '\n';
      status = 1;
      break;
    }
    Driver drv(src, std::move(text), /*preprocessed=*/true);
    std::string out;
    if (!translate_unit(drv, opts, verbose, out)) {
      status = 1;
      break;
    }
    if (pedantic(gcc_args)) markers_to_line_directives(out);
    std::ofstream o(dst, std::ios::binary);
    o << out;
    o.close();
    if (!o) {
      std::cerr << "cape-cc: cannot write " << dst.string() << '\n';
      status = 1;
      break;
    }
    if (keep) {
      // For reading: the translation of the file as written (cape-translate's readable
      // mode), beside the one compiled.
      fs::path stem = fs::path(src).stem().string();
      std::error_code ec;
      fs::copy_file(dst, stem.string() + ".cape.pp.c", fs::copy_options::overwrite_existing, ec);
      std::string orig, readable;
      std::string why;
      Driver rd(src, read_source(src, orig, why) ? orig : "");
      bool ok = rd.parse();
      if (ok) readable = translate(rd, opts);
      if (ok && !rd.has_errors()) {
        std::ofstream(stem.string() + ".cape.c", std::ios::binary) << readable;
        if (verbose) std::cerr << "cape-cc: kept " << stem.string() << ".cape.c and " << stem.string() << ".cape.pp.c\n";
      } else {
        fs::copy_file(dst, stem.string() + ".cape.c", fs::copy_options::overwrite_existing, ec);
        std::cerr << "cape-cc: note: " << src << " cannot be translated unpreprocessed (its directives need the "
                  << "preprocessor); " << stem.string() << ".cape.c is the preprocessed translation\n";
      }
    }
    if (verbose) std::cerr << "cape-cc: translated " << src << " -> " << dst.string() << '\n';
    gcc_args[sources[k]] = dst.string();
    stop_if_interrupted();
  }

  if (status == 0) {
    std::vector<std::string> cmd = c_compiler();
    for (auto& i : res.includes) cmd.push_back("-I" + i);
    bool keep_pp = false;
    for (size_t i = 0; i < gcc_args.size(); ++i) {
      if (gcc_args[i] == "-x") keep_pp = true;
      if (with_value.count(gcc_args[i])) ++i;
      else if (needs_preprocessing(gcc_args[i])) keep_pp = true;
    }
    // Macros, include paths and dependency output were the preprocessing's; a file that is
    // not translated (an object, a library, assembly) needs none of them either.
    for (size_t i = 0; i < gcc_args.size(); ++i) {
      const std::string& a = gcc_args[i];
      bool takes_value = false;
      bool pp_only = dependency_option(a) || (!keep_pp && preprocessing_only_option(a));
      if (pp_only) {
        preprocessor_option(a, takes_value);
        if (!takes_value && with_value.count(a)) takes_value = true;
        if (takes_value) ++i;
        continue;
      }
      cmd.push_back(a);
    }
    // The two-level model's templates are OpenMP for gcc (libgomp runs each node's threads).
    if (opts.mt) cmd.push_back("-fopenmp");
    if (link) {
      cmd.insert(cmd.end(), res.libs.begin(), res.libs.end());
      // Symbols bound at start-up, not at their first call: a lazy binding writes the GOT
      // (tracked memory) on the node that calls the function first, so nodes would differ
      // (and carry GOT words in their checkpoints) for nothing.
      cmd.push_back("-Wl,-z,now");
      // libcape's mark (runtime/src/cape.c), also in a program that calls nothing of it
      // (no directive): `cape run` refuses programs without it.
      cmd.push_back("-Wl,--undefined=cape_libcape_marker");
    }
    status = run_command(cmd, verbose, show);
    stop_if_interrupted();
  }
  return status;
}
