// cape-translate: one OpenMP C file in, its CAPE translation out (docs/translator.md).
//   cape-translate [--master-idle] [--ckpt=dickpt|tickpt] [--model=single|mt] [-v] [-E [cpp flags] | --preprocessed [--name F]] in.c [-o out.c]
// Without -E the file is translated as written (the readable translation: the user's
// macros, includes and comments stay); -E translates the preprocessed unit, as cape-cc does.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver.h"
#include "source_file.h"
#include "toolchain.h"
#include "translate.h"

using namespace cape::tr;

namespace {

const char* kUsage =
    "usage: cape-translate [--master-idle] [--ckpt=dickpt|tickpt] [--model=single|mt] [-v] [-E [-D.. -U.. -I.. -include F -std=..]]\n"
    "                      [--preprocessed [--name F]] in.c [-o out.c]\n"
    "  (default) translate the file as written: readable, keeps macros and includes; the\n"
    "            preprocessor is not run, so directives that only the preprocessor makes\n"
    "            (_Pragma, pragmas in macros, #if around pragmas) are not seen as such\n"
    "  -E        preprocess first ($CC -E -fopenmp with the flags given), as cape-cc does\n"
    "  --preprocessed  in.c is already `$CC -E` output; --name: the user's file it came from\n";

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  bool verbose = false, preprocess = false, preprocessed = false;
  std::string in, out, name;
  std::vector<std::string> pp_flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool takes_value = false;
    if (a == "--master-idle") opts.master_idle = true;
    else if (a == "--ckpt=tickpt" || a == "--ckpt=dickpt") opts.tickpt = a == "--ckpt=tickpt";
    else if (a == "--model=mt" || a == "--model=single") opts.mt = a == "--model=mt", opts.cape1 = false;
    else if (a == "--model=cape1") opts.cape1 = true, opts.mt = false;
    else if (a == "-v") verbose = true;
    else if (a == "-E" || a == "--preprocess") preprocess = true;
    else if (a == "--preprocessed") preprocessed = true;
    else if (a == "--name" && i + 1 < argc) name = argv[++i];
    else if (a == "-o" && i + 1 < argc) out = argv[++i];
    else if (a == "--version") {
      std::cout << version_text("cape-translate");
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (preprocessor_option(a, takes_value)) {
      pp_flags.push_back(a);
      if (takes_value && i + 1 < argc) pp_flags.push_back(argv[++i]);
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "cape-translate: unknown option '" << a << "'\n" << kUsage;
      return 2;
    } else if (in.empty()) in = a;
    else {
      std::cerr << "cape-translate: one input file only\n";
      return 2;
    }
  }
  if (in.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  if (!pp_flags.empty() && !preprocess) {
    std::cerr << "cape-translate: " << pp_flags[0] << " is a preprocessing flag: give -E too\n";
    return 2;
  }
  std::string text;
  if (preprocess) {
    Resources res;
    std::string why;
    find_resources(res, false, why);
    char tmpl[] = "/tmp/cape-translate.XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) {
      std::cerr << "cape-translate: cannot make a temporary file: " << std::strerror(errno) << '\n';
      return 1;
    }
    close(fd);
    install_interrupt_handlers();
    int st = run_command(preprocess_command(res, pp_flags, in, tmpl), verbose);
    bool ok = st == 0 && read_file(tmpl, text);
    unlink(tmpl);
    if (int sig = interrupted()) die_of_signal(sig);
    if (!ok) return st ? st : 1;
    preprocessed = true;
  } else if (std::string why; !read_source(in, text, why)) {
    std::cerr << "cape-translate: cannot read '" << in << "': " << why << "\n";
    return 1;
  }
  Driver drv(name.empty() ? in : name, std::move(text), preprocessed);
  bool parsed = drv.parse();
  std::string result;
  if (parsed) result = translate(drv, opts);
  drv.print(std::cerr, verbose);
  if (!parsed || drv.has_errors()) return 1;
  if (out.empty() || out == "-") {
    std::cout << result;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream o(out, std::ios::binary);
  o << result;
  o.close();
  if (!o) {
    std::cerr << "cape-translate: cannot write '" << out << "'\n";
    return 1;
  }
  return 0;
}
