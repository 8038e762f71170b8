// What the templates share while one translation unit is translated: the driver (tokens,
// AST, diagnostics), the options, the output, and what has been learnt of the file. One
// TranslationContext per unit, passed to every template (no globals, no god class).
#pragma once

#include <memory>
#include <set>
#include <map>
#include <string>
#include <vector>

#include "clauses.h"
#include "declarations.h"
#include "driver.h"
#include "emitter.h"
#include "tokens.h"
#include "translate.h"

namespace cape::tr {

// What lexically encloses a construct: the parallel region it is in, if any.
struct Enclosing {
  int region = 0;                       // id of the enclosing parallel construct (0: none)
  std::vector<std::string> privates;    // its private(list), swapped around barriers
  bool in_ws = false;                   // inside a for/sections/single
  int region_b = -1;                    // first token of the region's statement
  std::string calls;                    // its clause calls (Fig. 7), made again before every start()
  bool default_none = false;            // its default(none): unregistered data stays home
  std::vector<Reduction> reductions;    // its reductions (kept across barriers)
  bool alone = false;                   // one thread runs this alone: a master or single body, a section
};

// A `#pragma omp threadprivate(list)` variable and the tokens where it is visible.
struct ThreadPrivate {
  std::string var;
  int b = 0, e = 0;
};

class TranslationContext {
 public:
  TranslationContext(Driver& d, const Options& o);

  Driver& d;
  const Options& opt;
  const Tokens t;
  Emitter em;
  std::set<int> last;                          // ids of the program's last parallel region
  std::map<int, std::string> after_tok;       // text emitted right after a user token (TICKPT's static locals)
  int main_body = -1;                          // the '{' of main's body: the model is told there
  std::vector<ThreadPrivate> threadprivates;   // the threadprivate directives met so far
  std::set<int> atomic_reductions;             // atomics lowered to their region's reduction (critical.cpp)

  // Every declaration of the file, scanned when first needed.
  const Declarations& decls() const;

  // Copies tokens [b, e), translating the constructs in cs. `resync` puts a #line before
  // the first token; `exact` keeps the first token's trivia (whole-file copy).
  void emit_range(int b, int e, const std::vector<Construct*>& cs, const Enclosing& enc, bool resync,
                  bool exact = false);
  void emit_stmt(Stmt* s, const Enclosing& enc) { emit_range(s->all.b, s->all.e, s->all.cs, enc, true); }
  // Opens a construct's generated block, attributed to the pragma's line.
  void gen_begin(Construct* c, const std::string& what);
  // The next output line is token tok's line in its user file (or line `line` of that file).
  void line_at(int tok) { em.line(d.file_of(tok), t[tok].line); }
  void line_at(int tok, int line) { em.line(d.file_of(tok), line); }
  // The comments and preprocessor lines before token tok (an `#endif` closing the `#ifdef
  // _OPENMP` around a pragma, a line marker), when a template replaces the token itself.
  void keep_trivia(int tok);
  // Generated code, from the start of a line.
  void gen(const std::string& s) {
    em.newline();
    em.raw(s);
  }

  void unsupported(Construct* c, const std::string& reason);
  // The flags of cape_cc_fork() for a parallel for or parallel sections. defer_begin: the
  // template writes nothing of the program's between the fork and its cape_start() (no
  // copyin), so the region's determinism check may ride on start()'s trap (issue 14).
  std::string fork_flags(bool defer_begin = false) const {
    std::string f = opt.master_idle ? "CAPE_CC_MASTER_IDLE" : "";
    if (opt.mt) f += f.empty() ? "CAPE_CC_MT" : " | CAPE_CC_MT";
    if (defer_begin) f += f.empty() ? "CAPE_CC_DEFER_BEGIN" : " | CAPE_CC_DEFER_BEGIN";
    return f.empty() ? "0" : f;
  }
  // "file:line" of construct c as a C string literal: the region's name in cape's messages.
  std::string where(const Construct* c) const;
  // last_parallel() of construct c: "1" or "0".
  std::string last_of(const Construct* c) const { return last.count(c->id) ? "1" : "0"; }

 private:
  mutable std::unique_ptr<Declarations> decls_;
};

// Translates one construct (translate.cpp: the directive names and their templates).
void translate_construct(TranslationContext& cx, Construct* c, const Enclosing& enc);

}  // namespace cape::tr
