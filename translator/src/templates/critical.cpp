// `critical [(name)]` where several threads run (a `parallel` or `parallel for` body, or a
// function one calls): the master's lock service orders the nodes (docs/critical.md; beyond
// the CAPE papers). The body runs between cape_critical_enter(), which waits for the lock and
// injects what the other holders wrote under it, and cape_critical_exit(), which sends the
// body's writes back. Both are called from the user's function, like cape_create(), since the
// monitor captures the stack above the caller's frame. Of the stack only the locals the region
// shares travel: in a file with such constructs every region registers them before its
// cape_start() (lock_shared: cape_critical_shared), so a body in a function of this file that
// writes one through a pointer is covered too; the region's own locals and private copies are
// each thread's own. Outside a distributed region (the
// sequential part, a serialized region) the body runs as written: one thread, nothing to
// exclude. Inside `master`, `single` or a section too the service is asked: one thread runs
// that body, but other threads may be in a critical section of the same name meanwhile.
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/templates.h"

namespace cape::tr {


bool uses_exclusion(const TranslationContext& cx) {
  for (auto& c : cx.d.ast().constructs)
    if (c.dir.name == "critical" || c.dir.name == "atomic" || c.dir.name == "ordered") return true;
  static const Names locks = {"omp_set_lock", "omp_test_lock", "omp_set_nest_lock", "omp_test_nest_lock"};
  for (int i = 0; i < cx.t.size(); ++i)
    if (cx.t.ident(i) && !cx.t[i].system && locks.count(cx.t[i].text)) return true;
  return false;
}

std::string lock_shared(const TranslationContext& cx, Construct* c, const Clauses& cl, const std::string& loop_var,
                        const std::string& ind) {
  if (!c->stmt || !uses_exclusion(cx)) return "";
  std::vector<std::string> ex = cl.priv;
  for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.copyin}) ex.insert(ex.end(), l->begin(), l->end());
  for (auto& rd : cl.red) ex.push_back(rd.var);
  for (auto& v : threadprivates_at(cx, c->dir.first_tok)) ex.push_back(v);
  if (!loop_var.empty()) ex.push_back(loop_var);
  std::string out;
  for (auto& x : cx.decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false))
    out += Holes{{"x", x}, {"ind", ind}}.fill(
        "${ind}cape_critical_shared((void *)&$x, sizeof(__typeof__($x))); /* may be written under a lock */\n");
  return out + Holes{{"ind", ind}}.fill("${ind}cape_critical_shared((void *)0, 0); /* that is all of them */\n");
}

void critical(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  for (auto& cl : c->dir.clauses)
    if (cl.name != "hint") cx.d.error_at(cl.tok, "clause '" + cl.name + "' is not valid on 'omp critical'");
  std::string name;
  int after = c->dir.name_toks.back() + 1;
  // (Pragma tokens are compared by their text: they are not the C tokens' kinds.)
  if (after + 1 < c->dir.end_tok && cx.t[after].text == "(") name = cx.t[after + 1].text;
  // The enclosing function's locals the body names, declared before the region.
  Holes h{{"name", "\"" + name + "\""}};
  cx.gen_begin(c, "the master's lock service orders the nodes (docs/critical.md)");
  cx.gen(h.fill("  if (cape_cc_distributed()) cape_critical_enter($name);\n"));
  cx.emit_stmt(c->stmt, enc);
  cx.gen(h.fill("  if (cape_cc_distributed()) cape_critical_exit($name);\n}\n"));
}

}  // namespace cape::tr
