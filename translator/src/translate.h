// The translation pass: AST + tokens in, C with CAPE runtime calls out (docs/translator.md).
#pragma once

#include <string>

#include "driver.h"

namespace cape::tr {

struct Options {
  bool master_idle = false;  // cape-cc --master-idle: exact 001_3036025dc34c4021.txt Fig. 3
  bool tickpt = false;       // cape-cc --ckpt=tickpt: 002_2c61c2cb27f62a9a.txt's model (default dickpt)
  bool mt = false;           // cape-cc --model=mt: the two-level model, 000_2e1115959baa0e7d.txt Fig. 6
  bool cape1 = false;        // cape-cc --model=cape1: 003_45ed75503520c8f4.txt Fig. 2 (templates/cape1.h)
};

// Translates the parsed unit in `drv`. Errors, warnings and notes go to drv.diagnostics();
// the result is meaningful only when drv.has_errors() is false.
std::string translate(Driver& drv, const Options& options);

}  // namespace cape::tr
