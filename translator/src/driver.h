// Driver: owns the scanner, the tokens, the AST and the diagnostics of one translation unit
// (bpftrace's Driver). parse() runs the flex scanner and the bison parser over the text.
//
// The text is either a preprocessed unit (`$CC -E` output, what cape-cc translates): its line
// markers (`# 12 "prog.c" 1`) say which file and line each token comes from, so tokens,
// diagnostics and the translation's `#line`s point at the user's files; or a source file
// read as it is (cape-translate --no-preprocess, the readable translation).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "ast.h"

namespace cape::tr {

struct Diagnostic {
  enum Level { Error, Warning, Note } level = Error;
  int file = 0;
  int line = 0;
  int col = 0;
  std::string message;
  std::string once;  // a note_once key: a note shown without -v too, on one line
};

// A file named by the unit: the input itself, or one that a line marker names.
struct SourceFile {
  std::string name;     // as the line marker spells it (unescaped)
  bool system = false;  // a system header (flag 3): its declarations are not the user's
};

class Driver {
 public:
  // `preprocessed`: `source` is `$CC -E` output (line markers name the files).
  Driver(std::string filename, std::string source, bool preprocessed = false);

  // Returns false when the file could not be parsed (diagnostics say why).
  bool parse();

  // The input's name (the user's file, also for a preprocessed unit).
  const std::string& filename() const { return files_[0].name; }
  const std::string& source() const { return source_; }
  bool preprocessed() const { return preprocessed_; }
  const std::vector<SourceFile>& files() const { return files_; }
  const std::string& file_of(int tok) const { return files_[tokens_[tok].file].name; }
  std::vector<Token>& tokens() { return tokens_; }
  const std::vector<Token>& tokens() const { return tokens_; }
  Ast& ast() { return ast_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  bool has_errors() const { return errors_ > 0; }

  // Diagnostics are bounded whatever the input: an exact repeat is dropped, a message is cut
  // at kMaxMessage characters, and after kMaxErrors errors the rest are only counted.
  static constexpr int kMaxErrors = 50;
  static constexpr size_t kMaxMessage = 400;
  void report(Diagnostic d);
  void error(int line, int col, std::string msg) { report({Diagnostic::Error, cur_file_, line, col, std::move(msg), {}}); }
  void error_at(int tok, std::string msg) { at(Diagnostic::Error, tok, std::move(msg)); }
  void warning_at(int tok, std::string msg) { at(Diagnostic::Warning, tok, std::move(msg)); }
  void note_at(int tok, std::string msg) { at(Diagnostic::Note, tok, std::move(msg)); }
  // A note the user sees without -v, once per unit and `key` (one line; the others of the
  // same key are ordinary notes, shown under -v).
  void note_once(const std::string& key, int tok, std::string msg);
  // The parser's error, at the token it could not take; at the end of the file, at the
  // bracket that is still open (where it opened, not where the file ends).
  void syntax_error(const std::string& msg);
  // "file:line:col: error: msg", with the user's source line (a window of it around the
  // column) and a caret (bpftrace, ninja).
  std::string format(const Diagnostic& d) const;
  // Every diagnostic (notes only with `notes`), then how many were left out.
  void print(std::ostream& out, bool notes) const;

  // Token tok's column in its user file: in a preprocessed unit the preprocessor has
  // re-spaced the line (and expanded macros), so the token is looked up in the user's line.
  int user_col(int tok) const;
  // The text of line `line` of file `file` ("" when it cannot be read).
  std::string source_line(int file, int line) const;
  // "file:line" of token tok.
  std::string where(int tok) const { return file_of(tok) + ":" + std::to_string(tokens_[tok].line); }

  // Scanner side.
  void advance(const char* text, int len);  // YY_USER_ACTION: column tracking
  void add_trivia(const char* text, int len) { trivia_.append(text, len); }
  // A preprocessor line other than `#pragma omp`: trivia; a line marker (`# N "file" flags`
  // or `#line N ["file"]`) also says where the next line comes from.
  void directive(const char* text, int len);
  int push(TokKind kind, const char* text, int len);
  void rewind() { line_ = tok_line_; col_ = tok_col_; }  // undo advance() before yyless()
  int tok_line() const { return tok_line_; }
  int tok_col() const { return tok_col_; }
  bool pragma_first_word = false;  // the next word in a pragma is the directive name

 private:
  void at(Diagnostic::Level level, int tok, std::string msg);
  int file_index(const std::string& name, bool system);

  std::string source_;
  bool preprocessed_;
  std::vector<SourceFile> files_;
  std::vector<Token> tokens_;
  std::string trivia_;
  Ast ast_;
  std::vector<Diagnostic> diags_;
  int errors_ = 0, dropped_ = 0;
  std::map<std::string, int> once_;  // note_once keys -> how many
  int line_ = 1, col_ = 1;
  int tok_line_ = 1, tok_col_ = 1;
  int cur_file_ = 0;
  mutable std::map<int, std::vector<std::string>> lines_;  // the user files read for diagnostics
};

}  // namespace cape::tr
