#include "driver.h"

#include <sstream>

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

bool Driver::has_errors() const {
  for (const auto& d : diags_)
    if (d.level == Diagnostic::Error) return true;
  return false;
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

int Driver::push(TokKind kind, const char* text, int len) {
  Token t{kind, std::string(text, len), std::move(trivia_), tok_line_, tok_col_};
  trivia_.clear();
  tokens_.push_back(std::move(t));
  return static_cast<int>(tokens_.size()) - 1;
}

std::string Driver::format(const Diagnostic& d) const {
  static const char* level[] = {"error", "warning", "note"};
  std::ostringstream out;
  out << filename_ << ':' << d.line << ':' << d.col << ": " << level[d.level] << ": " << d.message
      << '\n';
  // The source line and a caret under the column.
  size_t pos = 0;
  for (int l = 1; l < d.line && pos != std::string::npos; ++l) {
    pos = source_.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos != std::string::npos && pos < source_.size()) {
    size_t end = source_.find('\n', pos);
    std::string text = source_.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    out << "  " << text << "\n  ";
    for (int c = 1; c < d.col && c - 1 < static_cast<int>(text.size()); ++c)
      out << (text[c - 1] == '\t' ? '\t' : ' ');
    out << "^\n";
  }
  return out.str();
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
