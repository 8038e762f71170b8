#include "driver.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "emitter.h"
#include "parser.hh"

using cape_tr_scan_t = void*;
int cape_tr_lex_init_extra(cape::tr::Driver* drv, cape_tr_scan_t* scanner);
int cape_tr_lex_destroy(cape_tr_scan_t scanner);
struct yy_buffer_state;
yy_buffer_state* cape_tr__scan_bytes(const char* bytes, int len, cape_tr_scan_t scanner);

namespace cape::tr {

Span join(Span a, const Span& c) {
  if (c.empty()) return a;
  if (a.empty()) return c;
  a.e = c.e;
  a.cs.insert(a.cs.end(), c.cs.begin(), c.cs.end());
  return a;
}

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> split_lines(std::string_view s) {
  if (s.substr(0, kBom.size()) == kBom) s.remove_prefix(kBom.size());
  std::vector<std::string> r;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t eol = s.find('\n', pos);
    if (eol == std::string_view::npos) eol = s.size();
    std::string l(s.substr(pos, eol - pos));
    if (!l.empty() && l.back() == '\r') l.pop_back();
    r.push_back(std::move(l));
    pos = eol + 1;
  }
  return r;
}

}  // namespace

Driver::Driver(std::string filename, std::string source, bool preprocessed)
    : source_(std::move(source)), preprocessed_(preprocessed) {
  // A UTF-8 byte-order mark is no C (gcc skips it too).
  if (std::string_view(source_).substr(0, kBom.size()) == kBom) source_.erase(0, kBom.size());
  files_.push_back({std::move(filename), false});
}

int Driver::file_index(const std::string& name, bool system) {
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i].name == name && files_[i].system == system) return static_cast<int>(i);
  files_.push_back({name, system});
  return static_cast<int>(files_.size()) - 1;
}

void Driver::report(Diagnostic d) {
  bool err = d.level == Diagnostic::Error;
  if (err) ++errors_;
  // Errors beyond the first kMaxErrors, and a bounded number of the others, are counted only.
  if ((err && errors_ > kMaxErrors) || (!err && diags_.size() >= 4 * kMaxErrors)) {
    ++dropped_;
    return;
  }
  if (d.message.size() > kMaxMessage) {
    d.message.resize(kMaxMessage);
    d.message += "...";
  }
  for (auto& x : diags_)
    if (std::tie(x.level, x.file, x.line, x.col, x.message) == std::tie(d.level, d.file, d.line, d.col, d.message)) {
      if (err) --errors_;
      return;
    }
  diags_.push_back(std::move(d));
}

void Driver::at(Diagnostic::Level level, int tok, std::string msg) {
  if (tok < 0 || tok >= static_cast<int>(tokens_.size())) return report({level, cur_file_, line_, col_, std::move(msg), {}});
  if (level == Diagnostic::Error && errors_ >= kMaxErrors) {  // no column to look up
    ++errors_;
    ++dropped_;
    return;
  }
  const Token& t = tokens_[tok];
  report({level, t.file, t.line, user_col(tok), std::move(msg), {}});
}

void Driver::note_once(const std::string& key, int tok, std::string msg) {
  if (once_[key]++ > 0) return note_at(tok, std::move(msg));
  size_t before = diags_.size();
  note_at(tok, std::move(msg));
  if (diags_.size() > before) diags_.back().once = key;
}

void Driver::syntax_error(const std::string& msg) {
  if (tokens_.empty()) return error(line_, col_, msg);
  if (tokens_.back().kind == TokKind::End) {
    std::vector<int> open, match(tokens_.size(), -1);
    for (int i = 0; i < static_cast<int>(tokens_.size()); ++i) {
      if (tokens_[i].kind != TokKind::Punct) continue;
      const auto& x = tokens_[i].text;
      if (x == "(" || x == "[" || x == "{" || x == "<%" || x == "<:") {
        open.push_back(i);
      } else if ((x == ")" || x == "]" || x == "}" || x == "%>" || x == ":>") && !open.empty()) {
        match[open.back()] = i;
        open.pop_back();
      }
    }
    if (!open.empty()) {
      int culprit = open.back();
      // A '{' missing its '}' makes the braces after it pair by count, not as written: the
      // last '{' whose '}' (by count) is indented left of the line that opened it is the
      // likelier culprit than the outermost brace left open at the end.
      std::vector<int> fol(tokens_.size(), 0);  // the first token of each token's line
      for (size_t k = 1; k < tokens_.size(); ++k)
        fol[k] = tokens_[k - 1].file == tokens_[k].file && tokens_[k - 1].line == tokens_[k].line ? fol[k - 1]
                                                                                                   : static_cast<int>(k);
      auto first_on_line = [&](int k) { return fol[k]; };
      for (int i = 0; i < static_cast<int>(tokens_.size()); ++i) {
        int m = match[i];
        if (m < 0 || tokens_[i].text != "{" || tokens_[m].line == tokens_[i].line) continue;
        if (first_on_line(m) != m) continue;
        if (user_col(m) < user_col(first_on_line(i))) culprit = i;
      }
      const std::string& b = tokens_[culprit].text;
      std::string close = b == "(" ? ")" : b == "[" || b == "<:" ? "]" : "}";
      return error_at(culprit, "'" + b + "' is never closed: the file ends before its '" + close + "'");
    }
  }
  error_at(static_cast<int>(tokens_.size()) - 1, msg);
}

void Driver::advance(const char* text, int len) {
  tok_line_ = line_;
  tok_col_ = col_;
  for (int i = 0; i < len; ++i) {
    if (text[i] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }
}

void Driver::directive(const char* text, int len) {
  add_trivia(text, len);
  long n;
  std::string name;
  bool named, system;
  if (!parse_line_marker(std::string_view(text, len), n, name, named, system)) return;
  if (named) cur_file_ = file_index(name, system);
  line_ = static_cast<int>(n) - 1;  // the newline that ends this line makes it n
}

int Driver::push(TokKind kind, const char* text, int len) {
  Token t{kind, std::string(text, len), std::move(trivia_), tok_line_, tok_col_, cur_file_, files_[cur_file_].system};
  trivia_.clear();
  tokens_.push_back(std::move(t));
  return static_cast<int>(tokens_.size()) - 1;
}

std::string Driver::source_line(int file, int line) const {
  auto it = lines_.find(file);
  if (it == lines_.end()) {
    std::vector<std::string> v;
    if (!preprocessed_ && file == 0) {
      v = split_lines(source_);
    } else if (file >= 0 && file < static_cast<int>(files_.size()) && !files_[file].name.empty() &&
               files_[file].name[0] != '<') {
      // A line marker may name anything (`#line 1 "/dev/zero"`): regular files of sane size only.
      std::error_code ec;
      auto size = std::filesystem::is_regular_file(files_[file].name, ec) ? std::filesystem::file_size(files_[file].name, ec)
                                                                         : 0;
      std::ifstream f;
      if (!ec && size > 0 && size < (64u << 20)) f.open(files_[file].name, std::ios::binary);
      if (f) {
        std::stringstream ss;
        ss << f.rdbuf();
        v = split_lines(ss.str());
      }
    }
    it = lines_.emplace(file, std::move(v)).first;
  }
  if (line < 1 || line > static_cast<int>(it->second.size())) return "";
  return it->second[line - 1];
}

int Driver::user_col(int tok) const {
  const Token& t = tokens_[tok];
  if (!preprocessed_) return t.col;
  std::string text = source_line(t.file, t.line);
  if (text.empty()) return t.col;
  // The tokens before tok on its line of the preprocessed text, matched in order in the
  // user's line; one that is not there (a macro's expansion) keeps the place reached.
  int s = tok;
  while (s > 0 && tokens_[s].trivia.find('\n') == std::string::npos &&
         tokens_[s - 1].file == t.file && tokens_[s - 1].line == t.line)
    --s;
  size_t pos = 0;
  for (int k = s; k <= tok; ++k) {
    const Token& x = tokens_[k];
    size_t found = std::string::npos, len = 0;
    if (x.kind == TokKind::PragmaStart) {
      size_t h = text.find('#', pos), o = h == std::string::npos ? h : text.find("omp", h);
      if (o != std::string::npos) found = h, len = o + 3 - h;
    } else if (!x.text.empty()) {
      bool word = ident_char(x.text.front());
      for (size_t p = text.find(x.text, pos); p != std::string::npos; p = text.find(x.text, p + 1)) {
        if (word && ((p > 0 && ident_char(text[p - 1])) ||
                     (p + x.text.size() < text.size() && ident_char(text[p + x.text.size()]))))
          continue;
        found = p, len = x.text.size();
        break;
      }
    }
    if (k == tok) {
      if (found != std::string::npos) return static_cast<int>(found) + 1;
      while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
      return static_cast<int>(pos) + 1;
    }
    if (found != std::string::npos) pos = found + len;
  }
  return t.col;
}

std::string Driver::format(const Diagnostic& d) const {
  static const char* level[] = {"error", "warning", "note"};
  std::ostringstream out;
  const std::string& name = d.file >= 0 && d.file < static_cast<int>(files_.size()) ? files_[d.file].name : filename();
  out << name << ':' << d.line << ':' << d.col << ": " << level[d.level] << ": " << d.message << '\n';
  // The user's line and a caret under the column; a long line is shown around the column.
  std::string text = source_line(d.file, d.line);
  if (text.empty()) return out.str();
  constexpr int kWindow = 120;
  int col = std::clamp(d.col, 1, static_cast<int>(text.size()) + 1);
  std::string shown = text;
  size_t caret = col - 1;  // index of the column's character in `shown`
  if (text.size() > static_cast<size_t>(kWindow)) {
    size_t from = col - 1 > kWindow / 2 ? col - 1 - kWindow / 2 : 0;
    std::string pre = from > 0 ? "..." : "";
    shown = pre + text.substr(from, kWindow) + (from + kWindow < text.size() ? "..." : "");
    caret = pre.size() + (col - 1 - from);
  }
  out << "  " << shown << "\n  ";
  for (size_t c = 0; c < caret && c < shown.size(); ++c) out << (shown[c] == '\t' ? '\t' : ' ');
  out << "^\n";
  return out.str();
}

void Driver::print(std::ostream& out, bool notes) const {
  for (const auto& d : diags_) {
    if (d.level != Diagnostic::Note || notes) {
      out << format(d);
    } else if (!d.once.empty()) {
      std::string f = format(d);
      out << f.substr(0, f.find('\n'));
      int more = once_.at(d.once) - 1;
      if (more > 0) out << " (and " << more << " more like it: -v shows them)";
      out << '\n';
    }
  }
  if (dropped_ > 0)
    out << filename() << ": " << dropped_ << " more diagnostic" << (dropped_ > 1 ? "s" : "")
        << " not shown (" << errors_ << " error" << (errors_ > 1 ? "s" : "") << " in all)\n";
}

bool Driver::parse() {
  cape_tr_scan_t scanner = nullptr;
  cape_tr_lex_init_extra(this, &scanner);
  cape_tr__scan_bytes(source_.data(), static_cast<int>(source_.size()), scanner);
  Parser parser(scanner, *this);
  int rc = parser.parse();
  cape_tr_lex_destroy(scanner);
  return rc == 0 && !has_errors();
}

}  // namespace cape::tr
