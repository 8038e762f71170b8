#include "context.h"

#include <algorithm>

#include "directive.h"

namespace cape::tr {
namespace {

// The line of the user's file where token tok's trivia starts, -1 when the trivia carries
// a line marker (a preprocessed unit): then the marker says it.
int trivia_line(const Token& tok) {
  const std::string& tv = tok.trivia;
  for (size_t pos = 0; pos < tv.size();) {
    size_t eol = tv.find('\n', pos);
    size_t k = tv.find_first_not_of(" \t", pos);
    if (k < eol && k < tv.size() && tv[k] == '#') {
      long n;
      std::string f;
      bool named, system;
      if (parse_line_marker(std::string_view(tv).substr(pos, eol == std::string::npos ? std::string::npos : eol - pos),
                            n, f, named, system))
        return -1;
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  return tok.line - static_cast<int>(std::count(tv.begin(), tv.end(), '\n'));
}

}  // namespace

TranslationContext::TranslationContext(Driver& drv, const Options& o)
    : d(drv), opt(o), t(drv.tokens()), em(drv.filename()) {}

const Declarations& TranslationContext::decls() const {
  if (!decls_) decls_ = std::make_unique<Declarations>(t);
  return *decls_;
}

void TranslationContext::emit_range(int b, int e, const std::vector<Construct*>& cs, const Enclosing& enc,
                                    bool resync, bool exact) {
  size_t ci = 0;
  bool first = true;
  for (int i = b; i < e;) {
    while (ci < cs.size() && cs[ci]->all.b < i) ++ci;
    if (ci < cs.size() && cs[ci]->all.b == i) {
      // Comments and preprocessor lines before the pragma (`#ifdef`...) stay in place.
      const Token& p = t[i];
      if (p.trivia.find_first_not_of(" \t\r\n\f\v") != std::string::npos) {
        if (first && resync)  // after generated code: say where the trivia starts
          if (int l = trivia_line(p); l >= 0) line_at(i, l);
        em.raw(p.trivia);
      }
      translate_construct(*this, cs[ci], enc);
      i = cs[ci]->all.e;
      ++ci;
      resync = true;
      first = true;
      continue;
    }
    const Token& tok = t[i];
    if (first && resync) {
      // Trivia holding preprocessor lines or comments is kept whole; else just indent.
      if (exact || tok.trivia.find_first_not_of(" \t\r\n\f\v") != std::string::npos) {
        if (int l = trivia_line(tok); l >= 0) line_at(i, l);
        em.raw(tok.trivia);
      } else {
        line_at(i);
        em.raw(std::string(tok.col > 1 ? tok.col - 1 : 0, ' '));
      }
    } else {
      em.raw(tok.trivia);
    }
    em.raw(tok.text);
    if (auto a = after_tok.find(i); a != after_tok.end()) em.raw(a->second);
    if (i == main_body)  // the model, told before the first region (cape-cc --ckpt)
      em.raw(std::string(" cape_set_ckpt_model(") + (opt.tickpt ? "CAPE_CKPT_TICKPT" : "CAPE_CKPT_DICKPT") + ");");
    first = false;
    ++i;
  }
}

void TranslationContext::keep_trivia(int tok) {
  const Token& p = t[tok];
  if (p.trivia.find_first_not_of(" \t\r\n\f\v") == std::string::npos) return;
  em.newline();
  if (int l = trivia_line(p); l >= 0) line_at(tok, l);
  em.raw(p.trivia);
  em.newline();
}

void TranslationContext::gen_begin(Construct* c, const std::string& what) {
  line_at(c->dir.first_tok);
  em.raw("{ /* cape: #pragma omp " + c->dir.name + " (" + d.where(c->dir.first_tok) + ")" +
         (what.empty() ? "" : ", " + what) + " */\n");
}

std::string TranslationContext::where(const Construct* c) const {
  std::string s = d.where(c->dir.first_tok), lit = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') lit += '\\';
    lit += ch;
  }
  return lit + "\"";
}

void TranslationContext::unsupported(Construct* c, const std::string& reason) {
  d.error_at(name_tok(c->dir), "'omp " + c->dir.name + "' is not supported by CAPE: " + reason);
}

}  // namespace cape::tr
