#include "context.h"

#include <algorithm>

#include "directive.h"

namespace cape::tr {

TranslationContext::TranslationContext(Driver& drv, const Options& o)
    : d(drv), opt(o), t(drv.tokens()), em(escape(drv.filename())) {}

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
          em.line(p.line - static_cast<int>(std::count(p.trivia.begin(), p.trivia.end(), '\n')));
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
      int nl = static_cast<int>(std::count(tok.trivia.begin(), tok.trivia.end(), '\n'));
      // Trivia holding preprocessor lines or comments is kept whole; else just indent.
      if (exact || tok.trivia.find_first_not_of(" \t\r\n\f\v") != std::string::npos) {
        em.line(tok.line - nl);
        em.raw(tok.trivia);
      } else {
        em.line(tok.line);
        em.raw(std::string(tok.col > 1 ? tok.col - 1 : 0, ' '));
      }
    } else {
      em.raw(tok.trivia);
    }
    em.raw(tok.text);
    if (i == main_body)  // the model, told before the first region (cape-cc --ckpt)
      em.raw(std::string(" cape_set_ckpt_model(") + (opt.tickpt ? "CAPE_CKPT_TICKPT" : "CAPE_CKPT_DICKPT") + ");");
    first = false;
    ++i;
  }
}

void TranslationContext::gen_begin(Construct* c, const std::string& what) {
  int line = t[c->dir.first_tok].line;
  em.line(line);
  em.raw("{ /* cape: #pragma omp " + c->dir.name + " (" + d.filename() + ":" + std::to_string(line) + ")" +
         (what.empty() ? "" : ", " + what) + " */\n");
}

std::string TranslationContext::where(const Construct* c) const {
  std::string s = d.filename() + ":" + std::to_string(t[c->dir.first_tok].line), lit = "\"";
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
