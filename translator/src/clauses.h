// The clauses of one construct, read and checked (002_2c61c2cb27f62a9a.txt Sect. 3.2,
// Table 1): which clause each construct accepts, and what each one says.
#pragma once

#include <string>
#include <vector>

#include "ast.h"
#include "tokens.h"

namespace cape::tr {

class Driver;

struct Reduction {
  std::string op;    // the OpenMP operator as written: + * - & | ^ && || min max
  std::string var;   // the variable (an array section's base)
  int tok = -1;      // the variable's token, for diagnostics
  bool section = false;     // var[lo:len]
  std::string lo, len;      // as written ("" when left out)
  // C expressions, set by resolve_reductions (templates/data_sharing.h): the bytes reduced
  // and one element (for its type).
  std::string addr, size, elem;
  bool whole() const { return !section; }
};

struct Clauses {
  std::vector<std::string> priv;        // private: restored before create()
  std::vector<std::string> firstpriv;   // firstprivate: restored too (every node has the value)
  std::vector<std::string> lastpriv;    // lastprivate: restored except on the last iteration's node
  std::vector<std::string> shared;
  std::vector<std::string> copyin;
  std::vector<std::string> copypriv;
  std::vector<Reduction> red;
  bool default_none = false;
  std::string num_threads = "0";        // C expressions, parenthesised, for the templates
  std::string cond = "1";
  std::string chunk = "0";
  bool nowait = false;
  bool bind_thread = false;  // loop bind(thread)
  int collapse = 1;          // collapse(n)
  bool ok = true;                       // no error was reported
};

// The clauses each construct accepts (Table 1, plus if, num_threads, schedule, collapse,
// ordered, nowait, proc_bind; simd's own are read only to be dropped with a note).
extern const Names kParallelClauses;
extern const Names kForClauses;
extern const Names kSectionsClauses;
extern const Names kSingleClauses;
extern const Names kSimdClauses;
extern const Names kLoopClauses;
// a ∪ b, without `minus`.
Names unite(const Names& a, const Names& b, std::string_view minus = "");

// Reads the clauses of `dir`, each checked against `allowed`; errors and notes go to the
// driver, and a clause in error leaves ok false. `whole_team`: a plain `parallel`.
Clauses read_clauses(Driver& d, const Tokens& t, const Directive& dir, const Names& allowed,
                     bool whole_team = false);

}  // namespace cape::tr
