// The output of a translation: generated code and the user's tokens, with `#line`
// directives so that the compiler's errors and the debugger point at the user's file. The
// user's text may carry the preprocessor's own line markers (a preprocessed unit); the
// emitter follows them, so it knows which file and line the next output line stands for.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace cape::tr {

// A line marker (`# N "file" flags` from the preprocessor, or `#line N ["file"]`): the next
// line is line `n` (of `file` when one is named). False for any other line.
inline bool parse_line_marker(std::string_view s, long& n, std::string& file, bool& named, bool& system) {
  size_t i = 0;
  auto blanks = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  blanks();
  if (i >= s.size() || s[i] != '#') return false;
  ++i;
  blanks();
  if (s.substr(i, 4) == "line" && (i + 4 == s.size() || s[i + 4] == ' ' || s[i + 4] == '\t')) {
    i += 4;
    blanks();
  }
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    n = n * 10 + (s[i++] - '0');
    if (n > 1'000'000'000) return false;
  }
  blanks();
  named = system = false;
  if (i < s.size() && s[i] == '"') {
    file.clear();
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      file += s[i];
    }
    if (i >= s.size()) return false;  // unterminated: not a line marker
    named = true;
    for (++i; i < s.size();) {
      blanks();
      if (i < s.size() && s[i] == '3' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) system = true;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    }
  }
  return true;
}

// A file name as a C string literal's contents.
inline std::string escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '\\' || c == '"') r += '\\';
    r += c;
  }
  return r;
}

class Emitter {
 public:
  // `file`: the user's file whose line 1 the output starts at.
  explicit Emitter(std::string file) : file_(std::move(file)) {}

  void raw(std::string_view s) {
    if (s.empty()) return;
    out_ += s;
    if (s.find('#') == std::string_view::npos) {
      mapped_ += static_cast<int>(std::count(s.begin(), s.end(), '\n'));
    } else {
      // Line markers in copied text say where the following lines come from.
      bool at_bol = bol_;
      for (size_t pos = 0; pos < s.size();) {
        size_t eol = s.find('\n', pos);
        std::string_view l = s.substr(pos, (eol == std::string_view::npos ? s.size() : eol) - pos);
        long n;
        std::string f;
        bool named, system;
        if (at_bol && parse_line_marker(l, n, f, named, system)) {
          mapped_ = static_cast<int>(n) - 1;  // the marker's own newline makes it n
          if (named) file_ = std::move(f);
        }
        if (eol == std::string_view::npos) break;
        ++mapped_;
        pos = eol + 1;
        at_bol = true;
      }
    }
    bol_ = s.back() == '\n';
  }
  void newline() {
    if (!bol_) raw("\n");
  }
  // The next output line is line `l` of `file`.
  void line(const std::string& file, int l) {
    newline();
    if (mapped_ != l || file != file_) {
      out_ += "#line " + std::to_string(l) + " \"" + escape(file) + "\"\n";
      mapped_ = l;
      file_ = file;
    }
  }
  std::string& str() { return out_; }

 private:
  std::string file_;
  std::string out_;
  int mapped_ = 1;  // the line of file_ the next output line stands for
  bool bol_ = true;
};

}  // namespace cape::tr
