#include "tokens.h"

namespace cape::tr {

Tokens::Tokens(const std::vector<Token>& toks) : t_(toks), match_(toks.size(), -1) {
  std::vector<int> stack;
  for (int i = 0; i < size(); ++i) {
    if (t_[i].kind != TokKind::Punct) continue;
    const auto& s = t_[i].text;
    if (s == "(" || s == "[" || s == "{" || s == "<%" || s == "<:") {
      stack.push_back(i);
    } else if ((s == ")" || s == "]" || s == "}" || s == "%>" || s == ":>") && !stack.empty()) {
      match_[stack.back()] = i;
      match_[i] = stack.back();
      stack.pop_back();
    }
  }
}

std::string Tokens::text(int b, int e) const {
  std::string r;
  for (int i = b; i < e; ++i) {
    if (i > b && !t_[i].trivia.empty()) r += ' ';
    r += t_[i].text;
  }
  return r;
}

std::string Tokens::text(const std::vector<int>& toks) const {
  std::string r;
  for (size_t k = 0; k < toks.size(); ++k) {
    if (k > 0 && !t_[toks[k]].trivia.empty()) r += ' ';
    r += t_[toks[k]].text;
  }
  return r;
}

}  // namespace cape::tr
