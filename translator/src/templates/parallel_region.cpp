// `parallel`: every node runs the region body (a team of one thread per node). Inside it,
// worksharing constructs take their share, and a barrier is the exchange of
// 001_3036025dc34c4021.txt Fig. 3 followed by cape_start() again (exchange.cpp); the end of
// the region is the same exchange. docs/translator.md, "parallel regions".
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/templates.h"

namespace cape::tr {

void parallel_region(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, kParallelClauses, /*whole_team=*/true);
  if (!check_not_nested(cx, c, enc) || !check_vars(cx, c, cl) || !cl.ok) return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = privates_of(cl);
  std::string shared = tickpt_shared(cx, c, cl, "", "    ");
  // A barrier keeps each thread's private copies in cape_pt_<id>_<x> while the originals'
  // bytes are put back, and each reduction's identity (cape_ri) and partial result (cape_rp).
  std::string pt, ri, identities;
  for (auto& x : priv)
    pt += Holes{{"x", x}, {"pt", gen_name("pt", id, x)}}.fill(
        "  static __thread __typeof__($x) $pt __attribute__((unused)); /* for barriers */\n");
  for (auto& rd : cl.red) {
    Holes r{{"x", rd.var}, {"ri", gen_name("ri", id, rd.var)}, {"rp", gen_name("rp", id, rd.var)}};
    ri += r.fill("  static __thread __typeof__($x) $ri __attribute__((unused)), $rp __attribute__((unused)); "
                 "/* the identity, the partial result */\n");
    identities += "    " + save_reduction(rd, r.fill("$ri")) + " /* start() gave it the identity */\n";
  }
  Holes h{{"cond", cl.cond},
          {"where", cx.where(c)},
          {"copyin", copyin_code(cl, id)},
          {"calls", shared + clause_calls(cx, cl, c->dir.first_tok, "    ")},
          {"identities", identities}};

  cx.gen_begin(c, "every node runs the region; writes meet at barriers and at its end");
  reduction_checks(cx, cl);
  cx.gen(in_memory(cx, c, cl, ""));
  cx.gen(save_privates(priv, id, false));
  cx.gen(pt);
  cx.gen(ri);
  cx.gen(h.fill(R"c(  if (cape_cc_fork(0, $cond, CAPE_CC_WHOLE_TEAM, $where)) {
$copyin
$calls
    cape_start();
$identities
  }
)c"));
  Enclosing inner;
  inner.region = id;
  inner.privates = priv;
  inner.region_b = c->stmt->all.b;
  inner.calls = shared + clause_calls(cx, cl, c->dir.first_tok, "    ", /*with_private=*/false);
  inner.default_none = cl.default_none;
  inner.reductions = cl.red;
  cx.emit_stmt(c->stmt, inner);
  cx.gen(restore_privates(priv, id));
  cx.gen(end_code(cx, c));
}

}  // namespace cape::tr
