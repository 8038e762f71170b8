// Driver: owns the scanner, the tokens, the AST and the diagnostics of one translation unit
// (bpftrace's Driver). parse() runs the flex scanner and the bison parser over the text.
#pragma once

#include <string>
#include <vector>

#include "ast.h"

namespace cape::tr {

struct Diagnostic {
  enum Level { Error, Warning, Note } level = Error;
  int line = 0;
  int col = 0;
  std::string message;
};

class Driver {
 public:
  Driver(std::string filename, std::string source)
      : filename_(std::move(filename)), source_(std::move(source)) {}

  // Returns false when the file could not be parsed (diagnostics say why).
  bool parse();

  const std::string& filename() const { return filename_; }
  const std::string& source() const { return source_; }
  std::vector<Token>& tokens() { return tokens_; }
  const std::vector<Token>& tokens() const { return tokens_; }
  Ast& ast() { return ast_; }
  std::vector<Diagnostic>& diagnostics() { return diags_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  bool has_errors() const;

  void error(int line, int col, std::string msg) { diags_.push_back({Diagnostic::Error, line, col, std::move(msg)}); }
  void error_at(int tok, std::string msg) { error(tokens_[tok].line, tokens_[tok].col, std::move(msg)); }
  void warning_at(int tok, std::string msg) {
    diags_.push_back({Diagnostic::Warning, tokens_[tok].line, tokens_[tok].col, std::move(msg)});
  }
  void note_at(int tok, std::string msg) {
    diags_.push_back({Diagnostic::Note, tokens_[tok].line, tokens_[tok].col, std::move(msg)});
  }
  // "file:line:col: error: msg", with the source line and a caret (bpftrace, ninja).
  std::string format(const Diagnostic& d) const;

  // Scanner side.
  void advance(const char* text, int len);  // YY_USER_ACTION: column tracking
  void add_trivia(const char* text, int len) { trivia_.append(text, len); }
  int push(TokKind kind, const char* text, int len);
  void rewind() { line_ = tok_line_; col_ = tok_col_; }  // undo advance() before yyless()
  int tok_line() const { return tok_line_; }
  int tok_col() const { return tok_col_; }
  bool pragma_first_word = false;  // the next word in a pragma is the directive name

 private:
  std::string filename_;
  std::string source_;
  std::vector<Token> tokens_;
  std::string trivia_;
  Ast ast_;
  std::vector<Diagnostic> diags_;
  int line_ = 1, col_ = 1;
  int tok_line_ = 1, tok_col_ = 1;
};

}  // namespace cape::tr
