// A strict on/off environment switch, for the paths that keep the old way behind a variable
// (CAPE_LAZY_*, CAPE_LOCAL_UNIX, ...): unset gives the default, "1" on, "0" off; anything else
// stops with a UserError naming the variable and what each value does, so that a typo never
// measures or runs the other path.
#pragma once

#include <cstdlib>
#include <string>

#include "util/error.h"
#include "util/text.h"

namespace cape::util {

inline bool env_on_off(const char* name, bool unset, const char* on_means, const char* off_means) {
  const char* e = std::getenv(name);
  if (!e) return unset;
  if (std::string(e) == "1") return true;
  if (std::string(e) == "0") return false;
  throw UserError(std::string(name) + "='" + printable(e) + "': give 1 (" + on_means + ") or 0 (" + off_means + ")");
}

}  // namespace cape::util
