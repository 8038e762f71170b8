#include "templates/shares.h"

#include "directive.h"

namespace cape::tr {

Holes loop_holes(int id) {
  Holes h;
  for (auto stem : {"lb", "ub", "st", "n", "sh", "b", "k", "s"}) h.set(stem, gen_name(stem, id));
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
}

void chunk_loop(TranslationContext& cx, const Loop& L, const Holes& h, const Enclosing& enc) {
  cx.gen(h.with("var", L.var).fill(R"c(  /* Fig. 3 line 17: D, on this node's chunks */
  for ($b = $sh.lo; $b < $sh.hi; $b += $sh.stride)
    for ($k = $b; $k < $sh.hi && $k - $b < $sh.chunk; ++$k) {
      $var = (__typeof__($var))((unsigned long long)$lb + $k * (unsigned long long)$st);
)c"));
  cx.emit_stmt(L.body, enc);
  cx.gen("    }\n");
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
