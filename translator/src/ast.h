// The translator's AST: only what the templates need.
//
// The source is kept as a flat vector of tokens, each with the whitespace, comments and
// preprocessor lines ("trivia") that precede it, so any token range can be written back
// byte for byte. The grammar (parser.yy) recognises `#pragma omp` lines and the extent of
// the statement each one governs; everything else is balanced token soup. The AST therefore
// holds token ranges plus the OpenMP constructs found inside them, in source order.
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace cape::tr {

enum class TokKind { Ident, Keyword, Number, String, Punct, PragmaStart, PragmaWord, PragmaTok,
                     PragmaEnd, End };

struct Token {
  TokKind kind;
  std::string text;
  std::string trivia;  // what precedes the token in the source
  int line = 0;        // in the user's file `file` (line markers of a preprocessed unit applied)
  int col = 0;         // in the text scanned (Driver::user_col: in the user's file)
  int file = 0;        // Driver::files() index
  bool system = false; // from a system header (line marker flag 3): not the user's code
};

struct Construct;

// Tokens [b, e) and the constructs directly inside them (not nested deeper).
struct Span {
  int b = -1;
  int e = -1;
  std::vector<Construct*> cs;
  bool empty() const { return b < 0; }
};
Span join(Span a, const Span& c);

struct Stmt {
  enum Kind { Compound, For, While, Do, If, Switch, Simple, Empty, Nested } kind = Simple;
  Span all;         // the whole statement
  Span header;      // For/While/If/Switch: the tokens between the parentheses
  Span items;       // Compound: the tokens between the braces
  Stmt* body = nullptr;   // For/While/Do/If/Switch: the governed statement
  Construct* nested = nullptr;  // Nested: a directive governing this statement
};

struct Clause {
  std::string name;
  std::vector<int> args;   // PragmaTok indices between the parentheses (empty if none)
  bool has_parens = false;
  int tok = -1;            // the clause name's token, for diagnostics
};

struct Directive {
  std::string name;        // "parallel for", "sections", ... (words joined by one space)
  std::vector<int> name_toks;
  std::vector<Clause> clauses;
  int first_tok = -1;      // the `#pragma omp` token
  int end_tok = -1;        // the PragmaEnd token
};

struct Construct {
  Directive dir;
  Stmt* stmt = nullptr;    // null for standalone directives (barrier, ...)
  Span all;                // pragma line and governed statement
  int id = 0;              // order of appearance, for unique names
};

// Owns every node; nodes refer to each other by plain pointers (bpftrace's ASTContext).
struct Ast {
  std::deque<Stmt> stmts;
  std::deque<Construct> constructs;
  Span unit;
  Stmt* make_stmt() { return &stmts.emplace_back(); }
  Construct* make_construct() {
    auto* c = &constructs.emplace_back();
    c->id = static_cast<int>(constructs.size());
    return c;
  }
};

}  // namespace cape::tr
