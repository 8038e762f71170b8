// cape-translate: one OpenMP C file in, its CAPE translation out (docs/translator.md).
//   cape-translate [--master-idle] [--ckpt=dickpt|tickpt] [-v] in.c [-o out.c]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver.h"
#include "source_file.h"
#include "translate.h"

int main(int argc, char** argv) {
  cape::tr::Options opts;
  bool verbose = false;
  std::string in, out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--master-idle") opts.master_idle = true;
    else if (a == "--ckpt=tickpt" || a == "--ckpt=dickpt") opts.tickpt = a == "--ckpt=tickpt";
    else if (a == "-v") verbose = true;
    else if (a == "-o" && i + 1 < argc) out = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::cout << "usage: cape-translate [--master-idle] [--ckpt=dickpt|tickpt] [-v] in.c [-o out.c]\n";
      return 0;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "cape-translate: unknown option '" << a << "'\n";
      return 2;
    } else if (in.empty()) in = a;
    else {
      std::cerr << "cape-translate: one input file only\n";
      return 2;
    }
  }
  if (in.empty()) {
    std::cerr << "usage: cape-translate [--master-idle] [--ckpt=dickpt|tickpt] [-v] in.c [-o out.c]\n";
    return 2;
  }
  std::string text, why;
  if (!cape::tr::read_source(in, text, why)) {
    std::cerr << "cape-translate: cannot read '" << in << "': " << why << "\n";
    return 1;
  }
  cape::tr::Driver drv(in, text);
  bool parsed = drv.parse();
  std::string result;
  if (parsed) result = cape::tr::translate(drv, opts);
  for (const auto& d : drv.diagnostics())
    if (d.level != cape::tr::Diagnostic::Note || verbose) std::cerr << drv.format(d);
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
