// `cape-cc --model=cape1`: 003_45ed75503520c8f4.txt Fig. 2, generalised to N parts and to
// loops as 003 Sect. IV says ([16], [17]). Each part is a process: the master's own (part 0)
// and one restarted from the master's complete checkpoint per other part (cape1_cc_fork);
// every part runs its share and puts its private variables' bytes back, so that only shared
// data is in its delta (as CAPE-2's templates do before create(): translate.cpp, rule 3);
// cape1_cc_join ends the others and makes the master continue from the merged checkpoint.
#include "templates/cape1.h"

#include "code.h"
#include "templates/data_sharing.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {
namespace {

// Clauses whose meaning Fig. 2's merge keeps: private data stays in each process; shared
// data is merged; firstprivate values are in the master's checkpoint. The rest is refused.
bool cape1_clauses(TranslationContext& cx, Construct* c, const Clauses& cl) {
  std::string what;
  if (!cl.red.empty()) what = "reduction";
  else if (!cl.lastpriv.empty()) what = "lastprivate";
  else if (!cl.copyin.empty()) what = "copyin";
  else if (cl.collapse > 1) what = "collapse";
  else if (cl.cond != "1") what = "if";
  if (what.empty()) return true;
  cx.d.error_at(name_tok(c->dir), "'" + what + "' is not supported by --model=cape1 (003 Fig. 2 merges the parts' "
                                   "writes, it combines no values); use the default model");
  return false;
}

}  // namespace

void cape1_unsupported(TranslationContext& cx, Construct* c) {
  cx.d.error_at(name_tok(c->dir), "'omp " + c->dir.name +
                                      "' is not supported by --model=cape1: 003_45ed75503520c8f4.txt Fig. 2 "
                                      "translates 'parallel for' and 'parallel sections' only; use the default model");
}

void cape1_parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, unite(kParallelClauses, kForClauses, "nowait"));
  Loop L;
  if (!check_not_nested(cx, c, enc) || !read_canonical_loop(cx.d, cx.t, *c, L, cl.collapse) ||
      !check_vars(cx, c, cl, L.var) || !cl.ok || !cape1_clauses(cx, c, cl))
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = with(privates_of(cl), L.var);
  if (!L.type.empty()) priv = without(priv, L.var);  // declared by the loop: a local of the block
  Holes h = loop_holes(id);
  h.set("chunk", cl.chunk).set("where", cx.where(c)).set("me", gen_name("me", id));
  cx.gen_begin(c, "003_45ed75503520c8f4.txt Fig. 2 (complete checkpoints), by shares");
  loop_setup(cx, L, h);
  cx.gen(save_privates(priv, id, false));
  cx.gen(h.fill(R"c(  static __thread cape_share_t $sh;
  static __thread unsigned long long $b, $k;
  int $me = cape1_cc_fork($where);    /* create(original); the other parts restart from it */
  cape1_cc_share(&$sh, $n, $chunk, $me);
)c"));
  Enclosing inner = enc;
  inner.region = id;
  inner.in_ws = true;
  chunk_loop(cx, L, h, inner);
  cx.gen(restore_privates(priv, id));
  cx.gen(h.fill(R"c(  $b = $k = 0;
  $sh = (cape_share_t){0, 0, 0, 0};
  cape1_cc_join($me);                  /* create(after), diff; merge into target, restart(target) */
}
)c"));
}

void cape1_parallel_sections(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, unite(kParallelClauses, kSectionsClauses, "nowait"));
  std::vector<Stmt*> secs;
  if (!check_not_nested(cx, c, enc) || !sections_of(cx, c, secs) || !check_vars(cx, c, cl) || !cl.ok ||
      !cape1_clauses(cx, c, cl))
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = privates_of(cl);
  Holes h{{"where", cx.where(c)}, {"me", gen_name("me", id)}};
  cx.gen_begin(c, "003_45ed75503520c8f4.txt Fig. 2 (complete checkpoints)");
  cx.gen(save_privates(priv, id, false));
  cx.gen(h.fill("  int $me = cape1_cc_fork($where);    /* create(original); the other parts restart from it */\n"));
  Enclosing inner = enc;
  inner.region = id;
  inner.in_ws = true;
  for (size_t j = 0; j < secs.size(); ++j) {
    cx.gen(h.with("j", std::to_string(j)).fill("  if (cape1_cc_mine($j, $me)) { /* section $j */\n"));
    Enclosing one = inner;
    one.alone = true;
    cx.emit_stmt(secs[j], one);
    cx.gen("  }\n");
  }
  cx.gen(restore_privates(priv, id));
  cx.gen(h.fill("  cape1_cc_join($me);                  /* create(after), diff; merge into target, restart(target) */\n}\n"));
}

}  // namespace cape::tr
