// `atomic` where several threads run (docs/critical.md; beyond the CAPE papers). Two paths,
// each said by a note under `cape-cc -v`:
//  - a reduction: every atomic on x in the region is `x op= e`, `x++`, `++x`, `x--` or `--x`
//    (x a scalar, or an element x[i] of an array declared here: the whole array is reduced)
//    with one combining operator (+ and - together, or *, &, |, ^), x is a local of the
//    enclosing function declared before the region, named nowhere else in it and whose address
//    is never taken (so nothing reads it there, and no function the region calls can): x joins
//    the region's reductions
//    (each thread updates its own partial result, combined at the end; no messages at all);
//  - else the master's lock service, one lock per location: cape_atomic_enter(&x) and
//    cape_atomic_exit(&x) around the statement, as for a critical section.
// Inside `master`, `single` or a section as well: other threads may update x meanwhile.
#include <map>
#include <set>

#include <optional>
#include <string>
#include <vector>

#include "code.h"
#include "templates/templates.h"

namespace cape::tr {

namespace {

// The clause that says the atomic's form ("update" when none).
std::string form_of(const Construct* c) {
  for (auto& cl : c->dir.clauses)
    if (cl.name == "read" || cl.name == "write" || cl.name == "update" || cl.name == "capture" || cl.name == "compare")
      return cl.name;
  return "update";
}

// The combining operator of an update `x op= e` / x++ / ++x / x-- / --x over [b, e) (no ';'),
// with x an identifier, or an array element `a[i]...` (`subscripted`): x's token, or -1.
int reducible_update(const Tokens& t, int b, int e, std::string& op, bool& subscripted) {
  auto combining = [&](int i) -> std::string {
    static const std::pair<const char*, const char*> ops[] = {{"+=", "+"}, {"-=", "+"}, {"*=", "*"},
                                                              {"&=", "&"}, {"|=", "|"}, {"^=", "^"}};
    for (auto [p, o] : ops)
      if (t.punct(i, p)) return o;
    return "";
  };
  // ident [..][..]: the token after it.
  auto after_lvalue = [&](int i) {
    if (i >= e || !t.ident(i)) return -1;
    int p = i + 1;
    while (p < e && t.punct(p, "[") && t.opens(p)) p = t.match(p) + 1;
    subscripted = p > i + 1;
    return p;
  };
  if (b < e && (t.punct(b, "++") || t.punct(b, "--")) && after_lvalue(b + 1) == e) return op = "+", b + 1;
  int p = after_lvalue(b);
  if (p < 0) return -1;
  if (p + 1 == e && (t.punct(p, "++") || t.punct(p, "--"))) return op = "+", b;
  if (p + 1 < e && !(op = combining(p)).empty()) return b;
  return -1;
}

// [b, e) of the statement without its ';'.
std::pair<int, int> statement_tokens(const TranslationContext& cx, const Construct* c) {
  int b = c->stmt->all.b, e = c->stmt->all.e;
  if (e > b && cx.t.punct(e - 1, ";")) --e;
  return {b, e};
}

// First token at bracket depth 0 in [b, e) for which pred holds, or -1.
template <class P>
int top_level(const Tokens& t, int b, int e, P pred) {
  for (int i = b; i < e; i = t.opens(i) ? t.match(i) + 1 : i + 1)
    if (pred(i)) return i;
  return -1;
}

bool is_assign(const Tokens& t, int i) {
  static const char* const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  for (const char* o : ops)
    if (t.punct(i, o)) return true;
  return false;
}

// The location an update-like expression [b, e) writes: its tokens.
std::pair<int, int> updated(const Tokens& t, int b, int e) {
  if (b < e && (t.punct(b, "++") || t.punct(b, "--"))) return {b + 1, e};
  int a = top_level(t, b, e, [&](int i) { return is_assign(t, i) || t.punct(i, "++") || t.punct(i, "--"); });
  return a < 0 ? std::pair{-1, -1} : std::pair{b, a};
}

// The tokens of x, the location the atomic reads or writes, or {-1, -1}.
std::pair<int, int> location(const TranslationContext& cx, const Construct* c) {
  const Tokens& t = cx.t;
  auto [b, e] = statement_tokens(cx, c);
  std::string form = form_of(c);
  if (c->stmt->kind == Stmt::Compound) {
    // capture { v = x; x op= e; } or { x op= e; v = x; }: the statement that updates.
    int ib = c->stmt->items.b, ie = c->stmt->items.e;
    for (int s = ib; s < ie;) {
      int end = top_level(t, s, ie, [&](int i) { return t.punct(i, ";"); });
      if (end < 0) end = ie;
      int a = top_level(t, s, end, [&](int i) { return is_assign(t, i); });
      bool compound = a >= 0 && !t.punct(a, "=");
      bool incdec = top_level(t, s, end, [&](int i) { return t.punct(i, "++") || t.punct(i, "--"); }) >= 0;
      bool self = a >= 0 && t.punct(a, "=") && t.text(a + 1, end).find(t.text(s, a)) != std::string::npos;
      if (compound || incdec || self) return updated(t, s, end);
      s = end + 1;
    }
    return {-1, -1};
  }
  int a = top_level(t, b, e, [&](int i) { return t.punct(i, "="); });
  if (form == "read") return a < 0 ? std::pair{-1, -1} : std::pair{a + 1, e};
  if (form == "capture" && a >= 0) return updated(t, a + 1, e);
  return updated(t, b, e);
}

}  // namespace

void atomic_reductions(TranslationContext& cx, Construct* region, Clauses& cl) {
  if (!region->stmt) return;
  const Tokens& t = cx.t;
  int rb = region->stmt->all.b, re = region->stmt->all.e;
  struct Use {
    int id, tok;
    std::string op;
    bool subscripted;  // x[i]...: an array's element (the whole array is reduced)
  };
  std::map<std::string, std::vector<Use>> uses;
  for (auto& c : cx.d.ast().constructs) {
    if (c.dir.name != "atomic" || !c.stmt || c.all.b < rb || c.all.e > re) continue;
    std::string form = form_of(&c), op;
    bool subscripted = false;
    auto [b, e] = statement_tokens(cx, &c);
    int x = form == "update" && c.stmt->kind != Stmt::Compound ? reducible_update(t, b, e, op, subscripted) : -1;
    if (x >= 0) uses[t[x].text].push_back({c.id, x, op, subscripted});
  }
  for (auto& [x, us] : uses) {
    bool ok = cx.decls().local_visible(x, region->dir.first_tok) &&
              !cx.decls().file_scope_var(x, region->dir.first_tok);
    // An element of an array declared in this file (not through a pointer), or a scalar.
    int dims = cx.decls().array_dims(x, region->dir.first_tok);
    for (auto& u : us) ok = ok && u.op == us[0].op && (u.subscripted ? dims > 0 : dims == 0);
    for (auto& r : cl.red) ok = ok && r.var != x;
    for (auto& cla : region->dir.clauses)  // named in a clause: its own rules
      for (int k : cla.args) ok = ok && t[k].text != x;  // pragma tokens: by text
    int named = 0;
    for (int i = rb; i < re; ++i) named += t.ident(i, x);
    // Its address taken anywhere (a pointer could read it in the region): not a reduction.
    for (int i = 1; i < t.size() && ok; ++i) ok = !(t.ident(i, x) && t.punct(i - 1, "&"));
    ok = ok && named == static_cast<int>(us.size());
    if (!ok) continue;
    Reduction r;
    r.op = us[0].op;
    r.var = x;
    r.tok = us[0].tok;
    cl.red.push_back(r);
    for (auto& u : us) {
      cx.atomic_reductions.insert(u.id);
      cx.d.note_at(u.tok, "'omp atomic' on '" + x + (u.subscripted ? "[...]" : "") + "' is a reduction(" + r.op +
                              ": " + x + ") of the region" + (u.subscripted ? " over the whole array" : "") +
                              ": each node updates its own partial result, combined at the region's end (no "
                              "messages)");
    }
  }
}

void atomic(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  static const Names allowed = {"read", "write", "update", "capture", "compare", "fail", "weak", "seq_cst",
                                "acq_rel", "release", "acquire", "relaxed", "hint"};
  for (auto& cl : c->dir.clauses)
    if (!allowed.count(cl.name)) cx.d.error_at(cl.tok, "clause '" + cl.name + "' is not valid on 'omp atomic'");
  if (cx.atomic_reductions.count(c->id)) {
    cx.gen_begin(c, "a reduction of the region: this node's partial result (docs/critical.md)");
    cx.emit_stmt(c->stmt, enc);
    cx.gen("}\n");
    return;
  }
  if (form_of(c) == "compare") {
    cx.unsupported(c, "'atomic compare' across nodes is not implemented yet");
    return cx.emit_stmt(c->stmt, enc);
  }
  auto [lb, le] = location(cx, c);
  std::string x = lb >= 0 && lb < le ? cx.t.text(lb, le) : "";
  std::string tls = gen_name("ax", c->id, "loc");
  cx.d.note_at(name_tok(c->dir), x.empty() ? std::string("'omp atomic' through the master's lock service (one lock for "
                                                         "every atomic whose location is not clear)")
                                           : "'omp atomic' on '" + x +
                                                 "' through the master's lock service (one lock per location)");
  Holes h{{"tls", tls}, {"x", x.empty() ? "0" : "(void *)&(" + x + ")"}};
  cx.gen_begin(c, "the master's lock service, on the location (docs/critical.md)");
  // Its writes known (the location first: it names the lock), as for a critical body.
  std::optional<std::vector<std::string>> writes;
  if (!x.empty()) writes = known_writes(cx.t, c->stmt->all.b, c->stmt->all.e);
  if (writes && writes->size() < 16) {
    std::string list = "{$tls, sizeof(" + x + ")}, ";
    for (const std::string& w : *writes) list += w + ", ";
    h.set("w", gen_name("writes", c->id)).set("list", Holes{{"tls", tls}}.fill(list) + "{0, 0}");
    cx.gen(h.fill("  static __thread void *$tls;\n"
                  "  if (cape_cc_distributed()) {\n"
                  "    $tls = $x;\n"
                  "    struct cape_write $w[] = {$list};\n"
                  "    cape_critical_enter_writes(\"atomic\", $w);\n"
                  "  }\n"));
  } else {
    cx.gen(h.fill("  static __thread void *$tls;\n"
                  "  if (cape_cc_distributed()) { $tls = $x; cape_atomic_enter($tls); }\n"));
  }
  cx.emit_stmt(c->stmt, enc);
  cx.gen(h.fill("  if (cape_cc_distributed()) cape_atomic_exit($tls);\n}\n"));
}

}  // namespace cape::tr
