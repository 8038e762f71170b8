// The output of a translation: generated code and the user's tokens, with `#line`
// directives so that the compiler's errors and the debugger point at the user's file.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace cape::tr {

class Emitter {
 public:
  // `file`: the user's file name as it goes between the quotes of `#line`.
  explicit Emitter(std::string file) : file_(std::move(file)) {}

  void raw(std::string_view s) {
    if (s.empty()) return;
    out_ += s;
    mapped_ += static_cast<int>(std::count(s.begin(), s.end(), '\n'));
    bol_ = s.back() == '\n';
  }
  void newline() {
    if (!bol_) raw("\n");
  }
  // The next output line is line `l` of the user's file.
  void line(int l) {
    newline();
    if (mapped_ != l) {
      out_ += "#line " + std::to_string(l) + " \"" + file_ + "\"\n";
      mapped_ = l;
    }
  }
  std::string& str() { return out_; }

 private:
  std::string file_;
  std::string out_;
  int mapped_ = 1;  // the user's line the next output line stands for
  bool bol_ = true;
};

// A file name as a C string literal's contents.
inline std::string escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '\\' || c == '"') r += '\\';
    r += c;
  }
  return r;
}

}  // namespace cape::tr
