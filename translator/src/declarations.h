// The variables of a C file, found by one token heuristic (no preprocessing, no types):
// `type name[...] = ..., *name;` at file scope and in blocks, `for (type name = ...)`, and
// function parameters. Two questions are asked of them: which variables a region shares
// implicitly (002_2c61c2cb27f62a9a.txt Sect. 3.1, 4.1 rule (3): TICKPT registers them,
// DICKPT keeps them in memory), and which locals a region has declared before a barrier
// (cleared before its create(), docs/translator.md rule 3).
#pragma once

#include <string>
#include <vector>

#include "tokens.h"

namespace cape::tr {

struct VarDecl {
  enum Storage { Auto, Static, Extern, Register };
  std::string name;
  int tok = -1;             // the declared name's token
  int scope_end = -1;       // the token closing its block (or for header); the token count at file scope
  Storage storage = Auto;
  bool param = false;       // a function parameter
  bool incomplete = false;  // `T a[]` outside a parameter list: an incomplete type, no sizeof
  bool conditional = false; // inside #if/#ifdef/#ifndef: may not be compiled
  // Variably modified (a guess: a bracket of its declarator names a visible variable or calls
  // a function, `double s[n]`, `int (*p)[f()]`): no `static` copy of its type, no goto over it.
  bool vla = false;
  // Its address may be taken where it is visible (`register` variables have none; a
  // declaration of a conditional block may name nothing).
  bool addressable() const { return storage != Register && !incomplete && !conditional; }
};

class Declarations {
 public:
  explicit Declarations(const Tokens& t);

  // Every declaration, in source order.
  const std::vector<VarDecl>& all() const { return decls_; }
  bool file_scope(const VarDecl& d) const { return d.scope_end == t_.size(); }

  // Names declared (automatic storage) by the statements of [b, e) and still in scope at
  // e: the variables a region declared before a barrier at e. Each name once.
  std::vector<std::string> locals_in_scope(int b, int e) const;

  // The variably modified one of those names (VarDecl::vla) declared in [b, e) and still in
  // scope at `at`, innermost last; nullptr when none is.
  const VarDecl* vla_local(const std::string& n, int b, int at) const;

  // The first variably modified local (or typedef name: `typedef double row[n];`) declared in
  // [b, e) whose scope ends at token `end` (a block's closing brace); nullptr when none is.
  const VarDecl* vla_declared(int b, int e, int end) const;

  // Variables visible at token `at` and named in [b, e) that are shared there, under the
  // implicit rules: declared before `at` (in scope), not declared inside [b, e), not in
  // `exclude`. Rule (3) of 4.1 first: with `file_scope`, every file-scope variable declared
  // before `at` (functions called from the region may write it); else only those a local
  // of the same name hides. Each name once.
  std::vector<std::string> implicitly_shared(int at, int b, int e, const std::vector<std::string>& exclude,
                                             bool file_scope = true) const;

  // The array dimensions of the variable named n visible at token `at` (`T n[a][b]`: 2), 0
  // for a scalar, a pointer or a parameter (whose array type is a pointer), -1 when no
  // declaration of n is visible (declared by a typedef'd array type, or not seen).
  int array_dims(const std::string& n, int at) const;
  // The text of the first bracket of that declaration (`double y[210][3]`: "210"), "" if none.
  std::string first_extent(const std::string& n, int at) const;

  // The variable named n visible at token `at` is a file-scope (or block-scope static) one.
  bool file_scope_var(const std::string& n, int at) const;

  // A variable of block scope (or a parameter) named n is visible at token `at`.
  bool local_visible(const std::string& n, int at) const;

 private:
  const Tokens& t_;
  std::vector<VarDecl> decls_;
  std::vector<VarDecl> vm_typedefs_;  // `typedef double row[n];`: its name, for vla_declared
};

}  // namespace cape::tr
