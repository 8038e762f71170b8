#include "canonical_loop.h"

#include <map>
#include <vector>

#include "directive.h"
#include "driver.h"

namespace cape::tr {

bool read_canonical_loop(Driver& d, const Tokens& t, const Construct& c, Loop& L) {
  Stmt* s = c.stmt;
  if (!s || s->kind != Stmt::For) {
    d.error_at(s ? s->all.b : name_tok(c.dir), "'omp " + c.dir.name + "' must be followed by a for loop");
    return false;
  }
  L.for_tok = s->all.b;
  L.body = s->body;
  int b = s->header.b, e = s->header.e;
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
