// The canonical loop form (OpenMP 4.5 Sect. 2.6) that `for` and `parallel for` distribute:
// init `[type] var = lb`; test `var op ub` or `ub op var` with < <= > >= !=; increment
// var++, ++var, var--, --var, var += s, var -= s, var = var + s, var = s + var, var = var - s.
#pragma once

#include <string>
#include <vector>

#include "ast.h"
#include "tokens.h"

namespace cape::tr {

class Driver;

struct Loop {
  std::string var;
  std::vector<Loop> nest;  // collapse(n): the loops 2..n, each with its var, bounds and step
  Span body_span;          // collapse(n): the innermost loop's body (its tokens and constructs)
  std::string type;   // the declared type of `for (type var = ...)`, empty when var is outer
  std::string lb, ub;  // the bounds as written
  std::string op;     // the test as `var op ub` (`ub > var` reads `var < ub`)
  std::string step;   // a signed C expression: "1", "-1", "(s)", "-(s)"
  int for_tok = -1;
  Stmt* body = nullptr;
};

// Reads the loop that construct c governs into L. A statement that is not a canonical
// `for` is reported ("loop of 'omp for' is not in canonical form: ...") and false returned.
// With collapse > 1 the loops nested in it too, perfectly nested and rectangular (the inner
// bounds and steps do not name an outer loop's variable), into L.nest and L.body_span.
bool read_canonical_loop(Driver& d, const Tokens& t, const Construct& c, Loop& L, int collapse = 1);

// The iteration count as a C expression in unsigned long long, from the names holding
// the bounds and step once evaluated (modular, so unsigned and downward loops are exact).
std::string trip_count(const Loop& L, const std::string& lb, const std::string& ub, const std::string& st);

}  // namespace cape::tr
