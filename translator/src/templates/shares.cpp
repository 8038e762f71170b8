#include "templates/shares.h"

#include <algorithm>

#include "code.h"
#include "directive.h"
#include "templates/data_sharing.h"

namespace cape::tr {

Holes loop_holes(int id) {
  Holes h;
  for (auto stem : {"lb", "ub", "st", "n", "sh", "b", "k", "s", "q"}) h.set(stem, gen_name(stem, id));
  return h;
}

void loop_setup(TranslationContext& cx, const Loop& L, const Holes& h) {
  Holes l = h;
  l.set("var", L.var).set("type", L.type.empty() ? "__typeof__(" + L.var + ")" : L.type);
  l.set("lower", L.lb).set("upper", L.ub).set("step", L.step);
  l.set("count", trip_count(L, l.fill("$lb"), l.fill("$ub"), l.fill("$st")));
  // `for (type var = ...)`: the variable is declared here, outside the chunk loop.
  l.set("declare", L.type.empty() ? "" : l.fill("  $type $var = $lb;\n"));
  cx.keep_trivia(L.for_tok);
  cx.line_at(L.for_tok);
  cx.em.raw(l.fill(R"c(  $type $lb = ($lower), $ub = ($upper);
  long long $st = $step;
$declare
  unsigned long long $n = $count;
)c"));
  // collapse(n): each inner loop's bounds and count, evaluated once (the loops are
  // rectangular); the iteration space is their product.
  for (size_t j = 0; j < L.nest.size(); ++j) {
    const Loop& in = L.nest[j];
    Holes m = nest_holes(h, j + 2);
    m.set("var", in.var).set("type", in.type.empty() ? "__typeof__(" + in.var + ")" : in.type);
    m.set("lower", in.lb).set("upper", in.ub).set("step", in.step);
    m.set("count", trip_count(in, m.fill("$lb"), m.fill("$ub"), m.fill("$st")));
    m.set("declare", in.type.empty() ? "" : m.fill("  $type $var = $lb;\n"));
    cx.line_at(in.for_tok);
    cx.em.raw(m.fill(R"c(  $type $lb = ($lower), $ub = ($upper);
  long long $st = $step;
$declare
  unsigned long long $n = $count;
)c"));
  }
  if (!L.nest.empty()) {
    std::string prod = l.fill("$n");
    for (size_t j = 0; j < L.nest.size(); ++j) prod += " * " + nest_holes(h, j + 2).fill("$n");
    cx.gen("  " + l.fill("$n") + " = " + prod + "; /* collapse: the iteration space */\n");
  }
}

bool nest_privates(TranslationContext& cx, Construct* c, const Loop& L, const Clauses& cl, std::vector<std::string>& priv) {
  if (L.nest.empty()) return true;
  std::vector<std::string> vars = {L.var};
  for (auto& in : L.nest) vars.push_back(in.var);
  for (auto& v : cl.lastpriv)
    if (std::find(vars.begin(), vars.end(), v) != vars.end()) {
      cx.d.error_at(name_tok(c->dir), "lastprivate(" + v + ") of a collapsed loop's variable is not supported yet");
      return false;
    }
  for (auto& in : L.nest) {
    priv = without(priv, in.var);
    if (in.type.empty()) priv = with(priv, in.var);
    else priv.insert(priv.begin(), in.var);
  }
  return true;
}

Holes nest_holes(const Holes& h, size_t level) {
  Holes m = h;
  for (auto stem : {"lb", "ub", "st", "n"}) m.set(stem, h.fill(std::string("$") + stem) + "_" + std::to_string(level));
  return m;
}

void chunk_loop(TranslationContext& cx, const Loop& L, const Holes& h, const Enclosing& enc) {
  if (L.nest.empty()) {
    cx.gen(h.with("var", L.var).fill(R"c(  /* Fig. 3 line 17: D, on this node's chunks */
  for ($b = $sh.lo; $b < $sh.hi; $b += $sh.stride)
    for ($k = $b; $k < $sh.hi && $k - $b < $sh.chunk; ++$k) {
      $var = (__typeof__($var))((unsigned long long)$lb + $k * (unsigned long long)$st);
)c"));
    cx.emit_stmt(L.body, enc);
    cx.gen("    }\n");
    return;
  }
  // collapse(n): iteration k of the collapsed space gives every loop's variable, the
  // innermost varying fastest (the sequential order). The quotient lives in TLS: the
  // window is open (rule 2).
  std::string vars;
  for (size_t j = L.nest.size(); j-- > 0;) {
    Holes m = nest_holes(h, j + 2).with("var", L.nest[j].var);
    vars += m.fill(
        "      $var = (__typeof__($var))((unsigned long long)$lb + ($q % $n) * (unsigned long long)$st); $q /= $n;\n");
  }
  vars += h.with("var", L.var).fill("      $var = (__typeof__($var))((unsigned long long)$lb + $q * (unsigned long long)$st);\n");
  cx.gen(h.fill(R"c(  /* Fig. 3 line 17: D, on this node's chunks of the collapsed iteration space */
  static __thread unsigned long long $q;
  for ($b = $sh.lo; $b < $sh.hi; $b += $sh.stride)
    for ($k = $b; $k < $sh.hi && $k - $b < $sh.chunk; ++$k) {
      $q = $k;
)c") + vars);
  cx.emit_range(L.body_span.b, L.body_span.e, L.body_span.cs, enc, true);
  cx.gen(h.fill("    }\n  $q = 0;\n"));
}

bool sections_of(TranslationContext& cx, Construct* c, std::vector<Stmt*>& secs) {
  Stmt* body = c->stmt;
  if (!body || body->kind != Stmt::Compound) {
    cx.d.error_at(body ? body->all.b : name_tok(c->dir),
                  "'omp " + c->dir.name + "' must be followed by a compound statement");
    return false;
  }
  int i = body->items.b < 0 ? body->all.b + 1 : body->items.b;
  int e = body->all.e - 1;
  size_t ci = 0;
  auto& cs = body->items.cs;
  while (i < e) {
    if (ci < cs.size() && cs[ci]->all.b == i) {
      Construct* sec = cs[ci];
      if (sec->dir.name != "section") {
        cx.d.error_at(name_tok(sec->dir), "expected '#pragma omp section' in 'omp " + c->dir.name +
                                              "', found 'omp " + sec->dir.name + "'");
        return false;
      }
      if (!sec->dir.clauses.empty()) cx.d.error_at(sec->dir.clauses[0].tok, "'omp section' takes no clauses");
      secs.push_back(sec->stmt);
      i = sec->all.e;
      ++ci;
      continue;
    }
    if (!secs.empty() || i != (body->items.b < 0 ? i : body->items.b)) {
      cx.d.error_at(i, "expected '#pragma omp section' before this statement in 'omp " + c->dir.name + "'");
      return false;
    }
    // The first section may omit its directive: it runs to the first `#pragma omp section`.
    Stmt* first = cx.d.ast().make_stmt();
    first->kind = Stmt::Simple;
    int end = ci < cs.size() ? cs[ci]->all.b : e;
    first->all = Span{i, end, {}};
    secs.push_back(first);
    i = end;
  }
  if (secs.empty()) cx.d.error_at(body->all.b, "'omp " + c->dir.name + "' has no section");
  return !secs.empty();
}

void emit_sections(TranslationContext& cx, const std::vector<Stmt*>& secs, const Enclosing& enc) {
  for (size_t j = 0; j < secs.size(); ++j) {
    cx.gen(Holes{{"j", std::to_string(j)}}.fill("  if (cape_cc_mine($j)) { /* section $j */\n"));
    Enclosing one = enc;
    one.alone = true;
    cx.emit_stmt(secs[j], one);
    cx.gen("  }\n");
  }
}

}  // namespace cape::tr
