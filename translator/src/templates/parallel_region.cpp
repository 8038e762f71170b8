// `parallel`: every node runs the region body (a team of one thread per node). Inside it,
// worksharing constructs take their share, and a barrier is the exchange of
// 001_3036025dc34c4021.txt Fig. 3 followed by cape_start() again (exchange.cpp); the end of
// the region is the same exchange. docs/translator.md, "parallel regions".
#include <algorithm>

#include "code.h"
#include "directive.h"
#include "templates/cape1.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/templates.h"

namespace cape::tr {

namespace {

// A team smaller than the nodes (num_threads(n), or omp_set_num_threads / OMP_NUM_THREADS on a
// plain region): the nodes beyond it (cape_cc_tid() < 0) must still meet every barrier of
// the region, so they run its worksharing constructs (where they have no share) and jump over
// the code between them, which only the team's threads run. So the directives must be at the
// top of the region's block: one inside a loop or an `if` would put team code around a
// barrier. Declarations jumped over leave the variable uninitialised on those nodes, which
// never use it (their constructs have no share).
//
// The region's directives at the top of its statement, in `top`; false (and `*bad`, the first
// one that is not) when one is inside a statement of the region.
bool top_directives(TranslationContext& cx, Stmt* s, std::vector<Construct*>& top, Construct** bad) {
  if (s->kind == Stmt::Nested) {  // the region's statement is a directive: every node meets it
    top.push_back(s->nested);
    return true;
  }
  if (s->kind != Stmt::Compound) {  // one statement: no directive in it, or one inside it
    if (s->all.cs.empty()) return true;
    *bad = s->all.cs[0];
    return false;
  }
  if (s->items.b < 0) return true;
  int b = s->items.b, e = s->items.e;
  const auto& cs = s->items.cs;
  // A directive at the top of the block: reached from the block's start by skipping whole
  // bracket groups, right after a statement's end (`;`, `}`, `{`, or another directive).
  int i = b, prev = -1;
  size_t ci = 0;
  while (i < e) {
    if (ci < cs.size() && cs[ci]->all.b == i) {
      bool after_stmt = prev < 0 || cx.t.punct(prev, ";") || cx.t.punct(prev, "}") || cx.t.punct(prev, "{") ||
                        (!top.empty() && top.back()->all.e == prev + 1);
      if (!after_stmt) break;
      top.push_back(cs[ci]);
      prev = cs[ci]->all.e - 1;
      i = cs[ci]->all.e;
      ++ci;
      continue;
    }
    if (ci < cs.size() && cs[ci]->all.b < i) break;  // inside a group skipped
    prev = i;
    i = cx.t.opens(i) ? cx.t.match(i) + 1 : i + 1;
    if (cx.t.opens(prev)) prev = i - 1;
  }
  if (top.size() == cs.size()) return true;
  *bad = cs[top.size()];
  return false;
}

// Whether the nodes outside the team must meet a directive at the top of the region: its
// worksharing constructs and barriers (a barrier, or one at their end), and `master`, whose
// template asks the thread number. `critical` and `atomic` are the team's code: they join the
// runs the other nodes jump over (else those nodes added their updates: `critical` count 3
// for num_threads(2) on 3 nodes, before session 14).
bool met_outside_team(const Construct* x) { return x->dir.name != "critical" && x->dir.name.rfind("atomic", 0) != 0; }

// The region's statement with each run of code between the directives the nodes outside the
// team meet skipped by those nodes (one branch per run).
void team_body(TranslationContext& cx, Construct* c, const std::vector<Construct*>& top, const Enclosing& inner) {
  Stmt* s = c->stmt;
  int skip = 0;
  auto skipped = [&](int from, int to, const std::vector<Construct*>& in) {
    bool code = !in.empty();
    for (int i = from; i < to && !code; ++i) code = cx.t[i].kind != TokKind::End;
    if (!code) return;
    std::string label = "cape_skip_" + std::to_string(c->id) + "_" + std::to_string(++skip);
    cx.gen("  if (cape_cc_tid() < 0) goto " + label + "; /* outside the team */\n");
    cx.emit_range(from, to, in, inner, true);
    cx.gen(label + ":;\n");
  };
  // A variably modified local declared at the top of the block (`double s[n];`): C forbids a
  // goto into its scope, so every node runs its declaration statement (a VLA has no
  // initialiser: only its bound is evaluated) and the code before and after it is skipped apart.
  auto run = [&](int from, int to, std::vector<Construct*> in) {
    while (s->kind == Stmt::Compound) {
      const VarDecl* d = cx.decls().vla_declared(from, to, cx.t.match(s->all.b));
      if (!d) break;
      int sb = d->tok, se = d->tok;
      while (sb > from && !cx.t.punct(sb - 1, ";") && !cx.t.punct(sb - 1, "}") && !cx.t.punct(sb - 1, "{")) --sb;
      while (se < to && !cx.t.punct(se, ";")) se = cx.t.opens(se) ? cx.t.match(se) + 1 : se + 1;
      se = std::min(se + 1, to);
      std::vector<Construct*> before, after;
      for (auto* x : in) (x->all.b < sb ? before : after).push_back(x);
      skipped(from, sb, before);
      cx.emit_range(sb, se, {}, inner, true);
      from = se;
      in = after;
    }
    skipped(from, to, in);
  };
  if (s->kind == Stmt::Compound && s->items.b < 0) return cx.emit_stmt(s, inner);
  if (s->kind == Stmt::Nested && met_outside_team(s->nested)) return cx.emit_stmt(s, inner);
  if (s->kind != Stmt::Compound) {  // one statement without those directives: the team's alone
    cx.gen("  {\n");
    run(s->all.b, s->all.e, s->all.cs);
    cx.gen("  }\n");
    return;
  }
  // `{`, then the runs of code between the directives met outside the team, and those.
  int b = s->items.b, e = s->items.e;
  cx.emit_range(s->all.b, b, {}, inner, true);
  int pos = b;
  std::vector<Construct*> in;
  for (auto* x : top) {
    if (!met_outside_team(x)) {
      in.push_back(x);
      continue;
    }
    run(pos, x->all.b, in);
    in.clear();
    cx.emit_range(x->all.b, x->all.e, {x}, inner, true);
    pos = x->all.e;
  }
  run(pos, e, in);
  cx.emit_range(e, s->all.e, {}, inner, true);
}

// The region's cape_set_shared() calls at its start, made through cape_cc_region_shared so
// that the barriers of the functions it calls can register the variables again.
std::string recorded_shared(std::string calls) {
  const std::string from = "cape_set_shared(", to = "cape_cc_region_shared(";
  for (size_t p = calls.find(from); p != std::string::npos; p = calls.find(from, p + to.size()))
    calls.replace(p, from.size(), to);
  return calls;
}

}  // namespace

void parallel_region(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, kParallelClauses, /*whole_team=*/true);
  atomic_reductions(cx, c, cl);  // atomics that can be reductions (atomic.cpp)
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
  // The privates, for the barriers of the functions the region calls (cape_cc_orphan_keep).
  std::string record;
  for (auto& x : priv)
    record += Holes{{"x", x}, {"pv", gen_name("pv", id, x)}}.fill(
        "    cape_cc_private((void *)&$x, &$pv, sizeof(__typeof__($x)));\n");
  std::string start_calls = recorded_shared(shared + clause_calls(cx, cl, c->dir.first_tok, "    ")) + record +
                            lock_shared(cx, c, cl, "", "    ");
  if (cx.opt.mt)  // recorded: the barriers register the originals again (cape_cc_mt_reductions_again)
    for (size_t p = start_calls.find("cape_reduction("); p != std::string::npos;
         p = start_calls.find("cape_reduction(", p + 20))
      start_calls.replace(p, 15, "cape_cc_mt_reduction(");
  // The team_body form (nodes beyond the team skip the region's code) is needed under
  // num_threads, and lets a plain region's team follow omp_set_num_threads / OMP_NUM_THREADS
  // at run time (CAPE_CC_SHRINK); without it libcape_cc refuses a team smaller than the nodes
  // (docs/translator.md, "The OpenMP API"). The two-level and cape1 models keep every node.
  std::vector<Construct*> top;
  Construct* bad = nullptr;
  bool top_only = top_directives(cx, c->stmt, top, &bad);
  bool clause = cl.num_threads != "0";
  if (clause && !top_only) {
    cx.d.error_at(name_tok(bad->dir), "'omp " + bad->dir.name + "' inside a statement of a 'parallel num_threads' "
                                      "region is not supported yet: the nodes outside the team jump over the "
                                      "region's code between its directives, which must then be at the top of "
                                      "its block");
    return cx.emit_stmt(c->stmt, enc);
  }
  bool single_model = !cx.opt.mt && !cx.opt.cape1;
  bool form = top_only && (clause || single_model);
  bool shrink = form && single_model;
  if (!clause && !top_only && single_model)
    cx.d.note_at(name_tok(bad->dir), "'omp " + bad->dir.name + "' inside a statement of a 'parallel' region: "
                                     "its team is every node, and a smaller omp_set_num_threads / "
                                     "OMP_NUM_THREADS stops the program there (run on that many nodes)");
  Holes h{{"cond", cl.cond},
          {"where", cx.where(c)},
          {"copyin", (cx.opt.mt ? mt_copyin_code(cl, id) : cx.opt.cape1 ? cape1_copyin_code(cl) : copyin_code(cl, id))},
          {"calls", start_calls},
          {"identities", identities}};

  cx.gen_begin(c, "every node runs the region; writes meet at barriers and at its end");
  reduction_checks(cx, cl);
  cx.gen(in_memory(cx, c, cl, ""));
  cx.gen(save_privates(priv, id, false));
  cx.gen(pt);
  cx.gen(ri);
  h.set("num_threads", cl.num_threads);
  // CAPE-1: this frame and up are the region's, whose writes the parts' merges keep (shared
  // locals); a region met inside a part runs serially there and marks nothing.
  if (cx.opt.cape1) cx.gen("  if (cape1_cc_outside()) cape_mark_frame();\n");
  h.set("flags", std::string(cx.opt.mt ? "CAPE_CC_WHOLE_TEAM | CAPE_CC_MT" : "CAPE_CC_WHOLE_TEAM") +
                     (cl.copyin.empty() ? " | CAPE_CC_DEFER_BEGIN" : "") +
                     (shrink ? " | CAPE_CC_SHRINK" : ""));  // (as fork_flags)
  cx.gen(h.fill(R"c(  if (cape_cc_fork($num_threads, $cond, $flags, $where)) {
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
  // The two-level model: the region's body runs on the node's threads; the exchanges at
  // its barriers, made by thread 0 from inside the team, take this frame as their boundary.
  if (cx.opt.mt) cx.gen("  cape_mark_frame();\n" + mt_open(cl, priv, ""));
  if (form) team_body(cx, c, top, inner);
  else cx.emit_stmt(c->stmt, inner);
  if (cx.opt.mt) cx.gen(mt_close(cl, id, "", "0") + "  cape_unmark_frame();\n");
  cx.gen(restore_privates(priv, id));
  cx.gen(end_code(cx, c));
}

}  // namespace cape::tr
