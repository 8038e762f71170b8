// Generated code written as text with named holes, so that a template reads like the code
// it produces (and like the figure of the paper it follows):
//
//   Holes h{{"sh", "cape_sh_3"}, {"n", "cape_n_3"}};
//   h.fill("  cape_cc_share(&$sh, $n, 0, 0); /* serial: every iteration */\n");
//
// `$name` (letters, digits, '_') or `${name}` is replaced by the value given for name. A
// hole alone on its line is a block: its value brings its own lines (ending in '\n', or
// nothing), so the line's newline is dropped. Values are not scanned again, so user text
// (bounds, variable names) never acts as a hole. A hole without a value is a bug of the
// translator: fill() throws std::logic_error.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cape::tr {

class Holes {
 public:
  Holes() = default;
  Holes(std::initializer_list<std::pair<std::string_view, std::string>> holes);

  // Sets (or replaces) the value of a hole.
  Holes& set(std::string_view name, std::string value);
  // A copy with one more hole, for a line repeated per variable.
  Holes with(std::string_view name, std::string value) const;

  std::string fill(std::string_view tmpl) const;

 private:
  std::vector<std::pair<std::string, std::string>> holes_;
};

// The names generated code declares are made unique by the construct's id (or a token
// index): cape_<stem>_<id>, and cape_<stem>_<id>_<var> for a copy of variable var.
std::string gen_name(std::string_view stem, int id);
std::string gen_name(std::string_view stem, int id, const std::string& var);

}  // namespace cape::tr
