// Fuzzes the translator (issue 12): any text, read as a source file or as a preprocessed
// unit, under both checkpoint models. No crash, no undefined behaviour, and bounded output:
// diagnostics at most 64x the input (plus one screenful for tiny inputs), the translation at
// most 64x the input plus one template per construct.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "driver.h"
#include "translate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cape::tr;
  if (size == 0) return 0;
  // The first byte picks the mode; the rest is the text.
  uint8_t mode = data[0];
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Options opts;
  opts.tickpt = mode & 1;
  opts.master_idle = mode & 2;
  // A file name no line marker can make the driver read from disk.
  Driver drv("<fuzz>", text, /*preprocessed=*/mode & 4);
  bool ok = drv.parse();
  std::string out;
  if (ok) out = translate(drv, opts);
  std::ostringstream diags;
  drv.print(diags, /*notes=*/true);
  size_t constructs = drv.ast().constructs.size();
  if (diags.str().size() > 64 * size + 4096) std::abort();
  if (out.size() > 64 * size + 16384 * (constructs + 1)) std::abort();
  return 0;
}
