// `single` runs on thread 0 (OpenMP lets any one thread run it), then a barrier unless
// `nowait`; `master` always runs on thread 0, without a barrier. docs/translator.md.
//
// copyprivate: thread 0 copies its values into statics of the construct (static storage:
// the same address on every node, written by one node only), which the closing barrier
// carries; every node takes them back after the exchange.
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/templates.h"

namespace cape::tr {

void single(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  bool is_single = c->dir.name == "single";
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, is_single ? kSingleClauses : Names{});
  if (is_single && !check_ws(cx, c, enc)) return cx.emit_stmt(c->stmt, enc);
  if (!is_single && enc.in_ws) {
    cx.d.error_at(name_tok(c->dir), "'omp master' may not be closely nested in a worksharing construct");
    return cx.emit_stmt(c->stmt, enc);
  }
  if (!cl.copypriv.empty() && cl.nowait) {
    for (auto& x : c->dir.clauses)
      if (x.name == "nowait") cx.d.error_at(x.tok, "clauses 'copyprivate' and 'nowait' may not be used together");
    cl.ok = false;
  }
  if (!cl.ok) return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = privates_of(cl);
  std::string statics, cp_calls, save, restore;
  for (auto& x : cl.copypriv) {
    Holes h{{"x", x}, {"cp", gen_name("cp", id, x)}};
    statics += h.fill("  static __typeof__($x) $cp; /* copyprivate */\n");
    cp_calls += h.fill("    cape_set_copyprivate((void *)&$cp, sizeof($cp));\n");
    save += h.fill("    CAPE_CC_SAVE($cp, $x);\n");
    restore += h.fill("    CAPE_CC_RESTORE($x, $cp); /* copyprivate */\n");
  }

  cx.gen_begin(c, is_single ? "run by thread 0" : "");
  cx.gen(statics);
  // TICKPT (and default(none)) ship registered data only: the statics are registered
  // before a start() of their own (a barrier before the single, which every thread of the
  // team meets).
  if ((cx.opt.tickpt || enc.default_none) && !cp_calls.empty()) cx.gen(barrier_code(cx, enc, c->all.b, "", cp_calls));
  // The two-level model: the node's other threads share the variables, so the thread that
  // runs the single declares its own private copies inside it (mt_ws_open), and every
  // thread takes the copyprivate values after the barrier, not only the exchanging one.
  if (!cx.opt.mt) cx.gen(save_privates(priv, id, true));
  cx.gen("  if (cape_cc_tid() == 0) {\n");
  if (cx.opt.mt) {
    Clauses own;
    own.priv = cl.priv;
    own.firstpriv = cl.firstpriv;
    cx.gen(mt_ws_open(cx, own, id, ""));
  }
  Enclosing inner = enc;
  inner.in_ws = is_single;
  inner.alone = true;
  cx.emit_stmt(c->stmt, inner);
  cx.gen(save);
  cx.gen("  }\n");
  if (!cx.opt.mt) cx.gen(restore_privates(priv, id));
  if (is_single && !cl.nowait) cx.gen(barrier_code(cx, enc, c->all.b, cx.opt.mt ? "" : restore));
  if (cx.opt.mt) cx.gen(restore);
  cx.gen("}\n");
}

}  // namespace cape::tr
