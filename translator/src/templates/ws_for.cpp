// `for` inside a region (or orphaned in a function a region calls): this thread's share of
// schedule(static[, chunk]) over the run-time team, then a barrier unless `nowait`. The
// chunk loop is parallel_for's (001_3036025dc34c4021.txt Fig. 3 line 17); the bounds and
// privates live in TLS, since the window is already open. docs/translator.md.
#include <algorithm>

#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {

void ws_for(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  bool simd = c->dir.name == "for simd", loop = c->dir.name == "loop";
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, loop ? kLoopClauses : simd ? unite(kForClauses, kSimdClauses) : kForClauses);
  if (simd) cx.d.note_at(name_tok(c->dir), "'simd' dropped from 'omp for simd'");
  Loop L;
  if (!check_ws(cx, c, enc) || !read_canonical_loop(cx.d, cx.t, *c, L, cl.collapse) || !check_vars(cx, c, cl, L.var) || !cl.ok)
    return cx.emit_stmt(c->stmt, enc);
  if (cx.opt.mt) mt_own_loop_vars(L);  // each of the node's threads its own (OpenMP: private)
  const int id = c->id;
  bool var_last = std::find(cl.lastpriv.begin(), cl.lastpriv.end(), L.var) != cl.lastpriv.end();
  auto priv = without(privates_of(cl), L.var);
  if (!var_last) {
    if (L.type.empty()) priv = with(priv, L.var);
    else priv.insert(priv.begin(), L.var);
  }
  if (!nest_privates(cx, c, L, cl, priv)) return cx.emit_stmt(c->stmt, enc);
  Holes h = loop_holes(id);
  h.set("chunk", cl.chunk);

  cx.gen_begin(c, "this thread's share of the static schedule");
  reduction_checks(cx, cl);
  cx.gen(reduction_window(cx, c, enc, cl));
  if (cx.opt.mt) cx.gen(mt_ws_open(cx, cl, id, L.var));  // each thread's own copies
  loop_setup(cx, L, h);
  cx.gen(save_privates(priv, id, true));
  cx.gen(save_privates(cl.lastpriv, id, true));
  cx.gen(h.fill(R"c(  static __thread cape_share_t $sh;
  static __thread unsigned long long $b, $k;
  cape_cc_share(&$sh, $n, $chunk, cape_cc_tid());
)c"));
  Enclosing inner = enc;
  inner.in_ws = true;
  chunk_loop(cx, L, h, inner);
  cx.gen(lastprivate_code(cl, id, h.fill("cape_cc_last(&$sh, $n)"), var_last ? L.var : ""));
  if (cx.opt.mt) cx.gen(mt_ws_close(cl, id, h.fill("cape_cc_last(&$sh, $n)")));
  cx.gen(restore_privates(priv, id));
  cx.gen(h.fill("  $b = $k = 0;\n  $sh = (cape_share_t){0, 0, 0, 0};\n"));
  if (!cl.nowait) cx.gen(barrier_code(cx, enc, c->all.b));
  cx.gen("}\n");
}

}  // namespace cape::tr
