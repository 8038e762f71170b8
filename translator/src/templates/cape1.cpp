// `cape-cc --model=cape1`: 003_45ed75503520c8f4.txt Fig. 2, generalised to N parts and to
// loops as 003 Sect. IV says ([16], [17]). Each part is a process: the master's own (part 0)
// and one restarted from the master's complete checkpoint per other part (cape1_cc_fork);
// every part runs its share and puts its private variables' bytes back, so that only shared
// data is in its delta (as CAPE-2's templates do before create(): translate.cpp, rule 3);
// cape1_cc_join ends the others and makes the master continue from the merged checkpoint.
#include "templates/cape1.h"

#include <algorithm>

#include "code.h"
#include "templates/data_sharing.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {
namespace {

// Clauses whose meaning Fig. 2's merge keeps: private data stays in each process; shared
// data is merged; firstprivate values are in the master's checkpoint. Reductions combine
// each part's partial result (rt/cape1_values.c), lastprivate keeps the last part's value.
// collapse and if are refused.
bool cape1_clauses(TranslationContext& cx, Construct* c, const Clauses& cl) {
  std::string what;
  if (cl.collapse > 1) what = "collapse";
  else if (cl.cond != "1") what = "if";
  if (what.empty()) return true;
  cx.d.error_at(name_tok(c->dir), "'" + what + "' is not supported by --model=cape1 yet; use the default model");
  return false;
}

// After the fork, in every part: copyin first (the master's values, which every part has),
// then the registrations (threadprivate variables, reductions) cape1_cc.h maps to libcape_cc.
std::string cape1_calls(TranslationContext& cx, Construct* c, const Clauses& cl) {
  return cape1_copyin_code(cl) + clause_calls(cx, cl, c->dir.first_tok, "  ");
}

}  // namespace

void cape1_unsupported(TranslationContext& cx, Construct* c) {
  cx.d.error_at(name_tok(c->dir), "'omp " + c->dir.name +
                                      "' is not supported by --model=cape1: mutual exclusion and ordering would need a "
                                      "lock service between the parts' processes (docs/cape1.md); use the default model");
}

std::string cape1_copyin_code(const Clauses& cl) {
  std::string r;
  for (auto& x : cl.copyin) r += "    cape1_cc_copyin((void *)&" + x + ", sizeof(" + x + "));\n";
  return r;
}

bool cape1_by_default_template(const std::string& n) {
  return n == "parallel" || n == "for" || n == "for simd" || n == "loop" || n == "sections" || n == "single" ||
         n == "master" || n == "barrier" || n == "flush" || n == "threadprivate";
}

void cape1_parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, unite(kParallelClauses, kForClauses, "nowait"));
  Loop L;
  if (!check_not_nested(cx, c, enc) || !read_canonical_loop(cx.d, cx.t, *c, L, cl.collapse) ||
      !check_vars(cx, c, cl, L.var) || !cl.ok || !cape1_clauses(cx, c, cl))
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  bool var_last = std::find(cl.lastpriv.begin(), cl.lastpriv.end(), L.var) != cl.lastpriv.end();
  auto priv = without(privates_of(cl), L.var);
  if (!var_last && L.type.empty()) priv = with(priv, L.var);  // (declared by the loop: a local of the block)
  Holes h = loop_holes(id);
  h.set("chunk", cl.chunk).set("where", cx.where(c)).set("me", gen_name("me", id));
  cx.gen_begin(c, "003_45ed75503520c8f4.txt Fig. 2 (complete checkpoints), by shares");
  loop_setup(cx, L, h);
  cx.gen(save_privates(priv, id, false));
  cx.gen(save_privates(cl.lastpriv, id, false));
  reduction_checks(cx, cl);
  cx.gen(h.fill(R"c(  static __thread cape_share_t $sh;
  static __thread unsigned long long $b, $k;
  if (cape1_cc_outside()) cape_mark_frame(); /* this frame and up: the region's (shared locals) */
  int $me = cape1_cc_fork($where);    /* create(original); the other parts restart from it */
  cape1_cc_share(&$sh, $n, $chunk, $me);
)c"));
  cx.gen(cape1_calls(cx, c, cl));
  Enclosing inner = enc;
  inner.region = id;
  inner.in_ws = true;
  chunk_loop(cx, L, h, inner);
  cx.gen(lastprivate_code(cl, id, h.fill("cape_cc_last(&$sh, $n)"), var_last ? L.var : ""));
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
  cx.gen(save_privates(cl.lastpriv, id, false));
  reduction_checks(cx, cl);
  cx.gen(h.fill("  if (cape1_cc_outside()) cape_mark_frame(); /* this frame and up: the region's (shared locals) */\n"
                "  int $me = cape1_cc_fork($where);    /* create(original); the other parts restart from it */\n"));
  cx.gen(cape1_calls(cx, c, cl));
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
  cx.gen(lastprivate_code(cl, id, h.with("last", std::to_string(secs.size() - 1)).fill("cape1_cc_mine($last, $me)")));
  cx.gen(restore_privates(priv, id));
  cx.gen(h.fill("  cape1_cc_join($me);                  /* create(after), diff; merge into target, restart(target) */\n}\n"));
}

}  // namespace cape::tr
