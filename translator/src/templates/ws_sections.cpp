// `sections` inside a region (or orphaned): section j on thread j % T (as
// parallel_sections.cpp, 003_45ed75503520c8f4.txt Fig. 3), then a barrier unless `nowait`.
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {

void ws_sections(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, kSectionsClauses);
  std::vector<Stmt*> secs;
  if (!check_ws(cx, c, enc) || !sections_of(cx, c, secs) || !check_vars(cx, c, cl) || !cl.ok)
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = privates_of(cl);
  cx.gen_begin(c, "sections round robin over the team");
  reduction_checks(cx, cl);
  cx.gen(reduction_window(cx, c, enc, cl));
  if (cx.opt.mt) cx.gen(mt_ws_open(cx, cl, id, ""));  // each thread's own copies
  cx.gen(save_privates(priv, id, true));
  cx.gen(save_privates(cl.lastpriv, id, true));
  Enclosing inner = enc;
  inner.in_ws = true;
  emit_sections(cx, secs, inner);
  cx.gen(lastprivate_code(cl, id, Holes{{"last", std::to_string(secs.size() - 1)}}.fill("cape_cc_mine($last)")));
  if (cx.opt.mt) cx.gen(mt_ws_close(cl, id, Holes{{"last", std::to_string(secs.size() - 1)}}.fill("cape_cc_mine($last)")));
  cx.gen(restore_privates(priv, id));
  if (!cl.nowait) cx.gen(barrier_code(cx, enc, c->all.b));
  cx.gen("}\n");
}

}  // namespace cape::tr
