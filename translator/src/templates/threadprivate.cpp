// `#pragma omp threadprivate(list)`: 002_2c61c2cb27f62a9a.txt Fig. 6. The directive becomes
// a comment; cape_set_threadprivate(&v, sizeof(v)) is made before the start() of every
// region where the variables are visible (data_sharing.cpp: a call holds only until its
// region's stop()), so each node's copy persists from region to region and never travels.
#include <cctype>

#include "code.h"
#include "templates/templates.h"

namespace cape::tr {

void threadprivate(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  const Tokens& t = cx.t;
  int b = c->dir.name_toks.back() + 1, e = c->dir.end_tok;
  std::vector<std::string> vars;
  bool ok = b < e && t[b].text == "(" && t[e - 1].text == ")" && e - b >= 3;
  for (int k = b + 1; ok && k < e - 1; ++k) {
    if ((k - b) % 2 == 1) {
      const auto& w = t[k].text;  // pragma tokens are not lexed as identifiers
      if (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_') vars.push_back(w);
      else ok = false;
    } else if (t[k].text != ",") {
      ok = false;
    }
  }
  if (!ok || (e - b) % 2 == 0) {
    cx.d.error_at(b < e ? b : name_tok(c->dir), "expected '(variable, ...)' after 'omp threadprivate'");
    return;
  }
  if (enc.region || enc.in_ws) {
    cx.d.error_at(name_tok(c->dir),
                  "'omp threadprivate' must appear outside parallel regions, where its variables are declared");
    return;
  }
  // Visible to the end of the enclosing block, or of the file.
  int depth = 0, scope_end = t.size();
  for (int i = c->dir.first_tok - 1; i >= 0; --i) {
    if (t.punct(i, "}")) ++depth;
    if (t.punct(i, "{") && depth-- == 0) {
      scope_end = t.opens(i) ? t.match(i) : scope_end;
      break;
    }
  }
  std::string list;
  for (auto& v : vars) {
    cx.threadprivates.push_back({v, c->dir.first_tok, scope_end});
    list += (list.empty() ? "" : ", ") + v;
  }
  cx.line_at(c->dir.first_tok);
  cx.em.raw("/* cape: #pragma omp threadprivate(" + list + "): each node keeps its own copy; "
            "cape_set_threadprivate() before every region's cape_start() (002_2c61c2cb27f62a9a.txt Fig. 6) */\n");
  // The two-level model: each of the node's threads its own copy too, in its TLS (gcc makes
  // the variables thread-local; thread stacks and TLS are never tracked).
  if (cx.opt.mt) {
    cx.em.raw("#pragma omp threadprivate(" + list + ")\n");
    // A file-scope variable: an entry whose function gives libcape_cc the main thread's copy
    // (a slave node's thread 0 keeps its own apart from the sequential part's writes). A
    // function's static has no file-scope name: left as it was (docs/translator.md, Limits).
    if (scope_end == static_cast<int>(t.size()))
      for (auto& v : vars) cx.em.raw("CAPE_CC_TPM_ENTRY(" + gen_name("tpm", c->dir.first_tok, v) + ", " + v + ");\n");
    return;
  }
  // Regions where the variables are not visible (another file's, or any region for a
  // function's static) register them too, from this entry (CAPE_CC_THREADPRIVATES()).
  for (auto& v : vars) cx.em.raw("CAPE_CC_TP_ENTRY(" + gen_name("tp", c->dir.first_tok, v) + ", " + v + ");\n");
}

}  // namespace cape::tr
