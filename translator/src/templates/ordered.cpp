// `ordered` blocks in a loop with the `ordered` clause (docs/critical.md; beyond the CAPE
// papers): the block of the loop's logical iteration k (the chunk loop's index, 0 .. n-1 in
// the sequential order) takes the master's lock service's token for the loop with ticket k,
// which goes to tickets 0, 1, 2, ... in order, with the writes earlier blocks made, whatever
// node runs them. Every iteration must run its block exactly once, or the next one waits
// forever: so the block must be a statement of the loop body itself (not inside an `if` or
// an inner loop), with no `continue` or `goto` before it; anything else is refused.
#include "code.h"
#include "templates/templates.h"

namespace cape::tr {

namespace {
bool is_loop(const std::string& n) {
  return n == "for" || n == "for simd" || n == "parallel for" || n == "parallel for simd" || n == "parallel loop" ||
         n == "loop";
}
bool has_clause(const Construct* c, const std::string& name) {
  for (auto& cl : c->dir.clauses)
    if (cl.name == name) return true;
  return false;
}
}  // namespace

void ordered(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  auto refuse = [&](const std::string& why) {
    cx.unsupported(c, why);
    if (c->stmt) cx.emit_stmt(c->stmt, enc);
  };
  if (!c->stmt) return refuse("standalone 'ordered' (depend, doacross) needs shared memory");
  for (auto& cl : c->dir.clauses)
    if (cl.name != "threads") return refuse("clause '" + cl.name + "' on 'omp ordered' is not supported");
  // The innermost loop construct around it.
  Construct* loop = nullptr;
  for (auto& l : cx.d.ast().constructs)
    if (is_loop(l.dir.name) && l.stmt && l.all.b < c->all.b && c->all.e <= l.all.e && (!loop || l.all.b > loop->all.b))
      loop = &l;
  if (!loop || !has_clause(loop, "ordered"))
    return refuse("'omp ordered' must be inside a loop construct with the 'ordered' clause");
  if (has_clause(loop, "collapse")) return refuse("'omp ordered' in a collapsed loop is not supported yet");
  if (has_clause(loop, "nowait"))
    return refuse("'omp ordered' in a 'for nowait' is not supported: the next loop's tickets would start before "
                  "this one's end");
  Stmt* body = loop->stmt->body;
  bool direct = body && body->kind == Stmt::Nested && body->nested == c;
  if (body && body->kind == Stmt::Compound && body->items.b >= 0) {
    // A statement of the block: reached from its start by skipping whole bracket groups,
    // right after a statement's end (`;`, `}`, `{`) or another directive's statement.
    const Tokens& t = cx.t;
    int i = body->items.b, prev = body->items.b - 1;
    while (i < c->all.b) {
      Construct* at = nullptr;
      for (Construct* x : body->items.cs)
        if (x->all.b == i) at = x;
      prev = at ? at->all.e - 1 : (t.opens(i) ? t.match(i) : i);
      i = prev + 1;
    }
    direct = i == c->all.b && (t.punct(prev, ";") || t.punct(prev, "}") || t.punct(prev, "{"));
  }
  if (!direct)
    return refuse("'omp ordered' must be a statement of the loop body itself (not inside an 'if' or an inner loop): "
                  "every iteration must run its ordered block exactly once, or the next iterations wait forever");
  for (int i = body->all.b; i < c->all.b; ++i)
    if (cx.t.ident(i, "continue") || cx.t.ident(i, "goto"))
      return refuse("'omp ordered' after a 'continue' or 'goto' in the loop body: every iteration must run its "
                    "ordered block exactly once, or the next iterations wait forever");
  Holes h{{"name", "\"ordered:" + std::to_string(loop->id) + "\""},
          {"k", gen_name("k", loop->id)}};
  cx.gen_begin(c, "the loop's iterations take the master's token in their order (docs/critical.md)");
  // Under --model=mt the node's threads poll for their turn (cape_cc_ordered_turn).
  cx.gen(h.fill(cx.opt.mt ? "  if (cape_cc_distributed()) cape_cc_ordered_turn($name, $k);\n"
                          : "  if (cape_cc_distributed()) cape_ordered_enter($name, $k);\n"));
  cx.emit_stmt(c->stmt, enc);
  cx.gen(h.fill("  if (cape_cc_distributed()) cape_ordered_exit($name);\n}\n"));
}

}  // namespace cape::tr
