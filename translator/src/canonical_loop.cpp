#include "canonical_loop.h"

#include <map>
#include <vector>

#include "directive.h"
#include "driver.h"

namespace cape::tr {

namespace {
bool read_header(Driver& d, const Tokens& t, const Construct& c, int b, int e, Loop& L);
}  // namespace

bool read_canonical_loop(Driver& d, const Tokens& t, const Construct& c, Loop& L, int collapse) {
  Stmt* s = c.stmt;
  if (!s || s->kind != Stmt::For) {
    d.error_at(s ? s->all.b : name_tok(c.dir), "'omp " + c.dir.name + "' must be followed by a for loop");
    return false;
  }
  L.for_tok = s->all.b;
  L.body = s->body;
  if (!read_header(d, t, c, s->header.b, s->header.e, L)) return false;
  if (collapse <= 1) return true;
  // The loops 2..n, read from the tokens of each body: `for (...) for (...)` or
  // `for (...) { for (...) ... }` with nothing else in the braces.
  auto fail = [&](int tok, const std::string& m) {
    d.error_at(tok, "loops of 'omp " + c.dir.name + "' collapse(" + std::to_string(collapse) + "): " + m);
    return false;
  };
  int b = L.body ? L.body->all.b : -1, e = L.body ? L.body->all.e : -1;
  const std::vector<Construct*>& cs = L.body ? L.body->all.cs : std::vector<Construct*>{};
  std::vector<std::string> vars = {L.var};
  for (int level = 2; level <= collapse; ++level) {
    while (b >= 0 && b < e && t.punct(b, "{") && t.match(b) == e - 1) ++b, --e;
    if (b < 0 || b >= e || t[b].kind != TokKind::Keyword || t[b].text != "for" || !t.punct(b + 1, "(") ||
        !t.opens(b + 1))
      return fail(b >= 0 && b < t.size() ? b : L.for_tok,
                  "expected loop " + std::to_string(level) + " here (the loops must be perfectly nested)");
    Loop in;
    in.for_tok = b;
    int m = t.match(b + 1);
    if (!read_header(d, t, c, b + 2, m, in)) return false;
    // Rectangular: the iteration space is the product of the counts, known before the loop.
    for (int k = b + 2; k < m; ++k)
      for (auto& v : vars)
        if (t.ident(k, v) && !(k > b + 2 && t.punct(k - 1, ".")) && !(k > b + 2 && t.punct(k - 1, "->")) &&
            !t.ident(k, in.var))
          return fail(k, "the bounds of loop " + std::to_string(level) + " use '" + v +
                             "' of an outer loop (non-rectangular loops are not supported yet)");
    vars.push_back(in.var);
    b = m + 1;
    // The body is one statement: a block, a nested loop, or up to the one ';'.
    if (b < e && !t.punct(b, "{") && !(t[b].kind == TokKind::Keyword && t[b].text == "for")) {
      for (int k = b; k < e; ++k) {
        if (t.opens(k) && !t.punct(k, "{")) { k = t.match(k); continue; }
        if (t.punct(k, ";") && k != e - 1)
          return fail(k + 1 < e ? k + 1 : k, "loop " + std::to_string(level) +
                                                 " must be the only statement of the loop around it");
      }
    } else if (b < e && t.punct(b, "{") && t.match(b) != e - 1) {
      return fail(t.match(b) + 1, "loop " + std::to_string(level) + " must be the only statement of the loop around it");
    }
    L.nest.push_back(in);
  }
  L.body_span.b = b;
  L.body_span.e = e;
  for (auto* x : cs)
    if (x->all.b >= b && x->all.b < e) L.body_span.cs.push_back(x);
  return true;
}

namespace {
bool read_header(Driver& d, const Tokens& t, const Construct& c, int b, int e, Loop& L) {
  auto fail = [&](int tok, const std::string& m) {
    d.error_at(tok, "loop of 'omp " + c.dir.name + "' is not in canonical form: " + m);
    return false;
  };
  if (b < 0) return fail(L.for_tok, "empty loop header");
  std::vector<int> semis;
  for (int i = b; i < e; ++i) {
    if (t.opens(i)) { i = t.match(i); continue; }
    if (t.punct(i, ";")) semis.push_back(i);
  }
  if (semis.size() != 2) return fail(b, "expected 'for (init; test; increment)'");
  // init: [type] var = lb
  int eq = -1;
  for (int i = b; i < semis[0]; ++i) {
    if (t.opens(i)) { i = t.match(i); continue; }
    if (t.punct(i, "=")) { eq = i; break; }
    if (t.punct(i, ",")) return fail(i, "one loop variable only");
  }
  if (eq < 0 || eq == b || !t.ident(eq - 1)) return fail(b, "the initialisation must be 'var = lb'");
  L.var = t[eq - 1].text;
  L.type = t.text(b, eq - 1);
  if (L.type.find('*') != std::string::npos) return fail(b, "pointer loop variables are not supported yet");
  if (eq + 1 >= semis[0]) return fail(eq, "missing lower bound");
  L.lb = t.text(eq + 1, semis[0]);
  // test: var op ub, or ub op var
  int cb = semis[0] + 1, ce = semis[1];
  static const Names rel = {"<", "<=", ">", ">=", "!="};
  if (ce - cb >= 3 && t.ident(cb, L.var) && rel.count(t[cb + 1].text)) {
    L.op = t[cb + 1].text;
    L.ub = t.text(cb + 2, ce);
  } else if (ce - cb >= 3 && t.ident(ce - 1, L.var) && rel.count(t[ce - 2].text)) {
    static const std::map<std::string, std::string> flip = {
        {"<", ">"}, {"<=", ">="}, {">", "<"}, {">=", "<="}, {"!=", "!="}};
    L.op = flip.at(t[ce - 2].text);
    L.ub = t.text(cb, ce - 2);
  } else {
    return fail(cb < ce ? cb : semis[0],
                "the test must compare '" + L.var + "' with a bound using <, <=, >, >= or !=");
  }
  for (int i = cb; i < ce; ++i) {
    if (t.opens(i)) { i = t.match(i); continue; }
    const auto& x = t[i].text;
    if (t[i].kind == TokKind::Punct && (x == "&&" || x == "||" || x == "?" || x == ","))
      return fail(i, "the test must be a single comparison");
  }
  // increment
  int ib = semis[1] + 1, ie = e;
  auto is = [&](int i, std::string_view s) { return i < ie && t[i].text == s; };
  auto var_at = [&](int i) { return i < ie && t.ident(i, L.var); };
  int n = ie - ib;
  if (n == 2 && var_at(ib) && (is(ib + 1, "++") || is(ib + 1, "--"))) {
    L.step = is(ib + 1, "++") ? "1" : "-1";
  } else if (n == 2 && var_at(ib + 1) && (is(ib, "++") || is(ib, "--"))) {
    L.step = is(ib, "++") ? "1" : "-1";
  } else if (n >= 3 && var_at(ib) && (is(ib + 1, "+=") || is(ib + 1, "-="))) {
    L.step = std::string(is(ib + 1, "+=") ? "" : "-") + "(" + t.text(ib + 2, ie) + ")";
  } else if (n >= 5 && var_at(ib) && is(ib + 1, "=") && var_at(ib + 2) && (is(ib + 3, "+") || is(ib + 3, "-"))) {
    L.step = std::string(is(ib + 3, "+") ? "" : "-") + "(" + t.text(ib + 4, ie) + ")";
  } else if (n >= 5 && var_at(ib) && is(ib + 1, "=") && var_at(ie - 1) && is(ie - 2, "+")) {
    L.step = "(" + t.text(ib + 2, ie - 2) + ")";
  } else {
    return fail(ib < ie ? ib : semis[1],
                "the increment must be ++, --, +=, -= or '" + L.var + " = " + L.var + " + step'");
  }
  return true;
}
}  // namespace

std::string trip_count(const Loop& L, const std::string& lb, const std::string& ub, const std::string& st) {
  const std::string u = "(unsigned long long)";
  auto up = [&](bool incl) {
    return st + " > 0 && " + lb + (incl ? " <= " : " < ") + ub + " ? (" + u + ub + " - " + u + lb +
           (incl ? "" : " - 1") + ") / " + u + st + " + 1 : 0";
  };
  auto down = [&](bool incl) {
    return st + " < 0 && " + lb + (incl ? " >= " : " > ") + ub + " ? (" + u + lb + " - " + u + ub +
           (incl ? "" : " - 1") + ") / " + u + "-" + st + " + 1 : 0";
  };
  if (L.op == "<") return up(false);
  if (L.op == "<=") return up(true);
  if (L.op == ">") return down(false);
  if (L.op == ">=") return down(true);
  return st + " > 0 ? (" + up(false) + ") : (" + down(false) + ")";  // != with step +-1
}

}  // namespace cape::tr
