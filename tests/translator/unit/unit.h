// A C source parsed by the translator's own lexer and parser, for the unit tests of the
// heuristics that read its tokens.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "driver.h"
#include "tokens.h"

namespace cape::tr::test {

struct Parsed {
  explicit Parsed(std::string src) : drv("t.c", std::move(src)) {
    ok = drv.parse();
    tokens = std::make_unique<Tokens>(drv.tokens());
  }
  const Tokens& t() const { return *tokens; }
  // The index of the n-th token (0-based) whose text is s, -1 when there is none.
  int tok(const std::string& s, int n = 0) const {
    for (int i = 0; i < t().size(); ++i)
      if (t()[i].text == s && n-- == 0) return i;
    return -1;
  }
  // The construct whose `#pragma omp` line is line `line`.
  Construct* construct_at(int line) {
    for (auto& c : drv.ast().constructs)
      if (drv.tokens()[c.dir.first_tok].line == line) return &c;
    return nullptr;
  }
  // The diagnostics as "line:col: message".
  std::vector<std::string> messages() const {
    std::vector<std::string> r;
    for (auto& d : drv.diagnostics())
      r.push_back(std::to_string(d.line) + ":" + std::to_string(d.col) + ": " + d.message);
    return r;
  }

  Driver drv;
  bool ok = false;
  std::unique_ptr<Tokens> tokens;
};

}  // namespace cape::tr::test
