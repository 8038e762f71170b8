// The token layer the templates and heuristics read: the Driver's tokens (ast.h) with their
// brackets paired, and the questions every heuristic asks of them. Nothing here knows
// about OpenMP beyond where a `#pragma omp` line starts and ends.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ast.h"

namespace cape::tr {

// A set of identifiers (clause names, library functions, type words).
using Names = std::set<std::string, std::less<>>;

class Tokens {
 public:
  explicit Tokens(const std::vector<Token>& toks);

  int size() const { return static_cast<int>(t_.size()); }
  const Token& operator[](int i) const { return t_[i]; }

  // Bounds-checked: false outside [0, size()).
  bool punct(int i, std::string_view s) const {
    return i >= 0 && i < size() && t_[i].kind == TokKind::Punct && t_[i].text == s;
  }
  bool ident(int i) const { return i >= 0 && i < size() && t_[i].kind == TokKind::Ident; }
  bool ident(int i, std::string_view s) const { return ident(i) && t_[i].text == s; }

  // The bracket paired with token i ( ( [ { and their digraphs ), -1 when none.
  int match(int i) const { return match_[i]; }
  // Token i opens a bracket group that is closed.
  bool opens(int i) const { return match_[i] > i; }

  // At a `#pragma omp` line (token i is its PragmaStart): moves i to the line's PragmaEnd
  // (or to e) and returns true, so that a scan's `++i` steps past the line.
  bool skip_pragma(int& i, int e) const {
    if (t_[i].kind != TokKind::PragmaStart) return false;
    while (i < e && t_[i].kind != TokKind::PragmaEnd) ++i;
    return true;
  }

  // Tokens [b, e), or the listed ones, on one line, single-spaced where the source had space.
  std::string text(int b, int e) const;
  std::string text(const std::vector<int>& toks) const;

 private:
  const std::vector<Token>& t_;
  std::vector<int> match_;
};

}  // namespace cape::tr
