// `critical [(name)]` where several threads run (a `parallel` or `parallel for` body, or a
// function one calls): the master's lock service orders the nodes (docs/critical.md; beyond
// the CAPE papers). The body runs between cape_critical_enter(), which waits for the lock and
// injects what the other holders wrote under it, and cape_critical_exit(), which sends the
// body's writes back. Both are called from the user's function, like cape_create(), since the
// monitor captures the stack above the caller's frame. Of the stack only the locals the region
// shares travel: in a file with such constructs every region registers them before its
// cape_start() (lock_shared: cape_critical_shared), so a body in a function of this file that
// writes one through a pointer is covered too; the region's own locals and private copies are
// each thread's own. Outside a distributed region (the
// sequential part, a serialized region) the body runs as written: one thread, nothing to
// exclude. Inside `master`, `single` or a section too the service is asked: one thread runs
// that body, but other threads may be in a critical section of the same name meanwhile.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "code.h"
#include "templates/data_sharing.h"
#include "templates/templates.h"

namespace cape::tr {


bool uses_exclusion(const TranslationContext& cx) {
  for (auto& c : cx.d.ast().constructs)
    if (c.dir.name == "critical" || c.dir.name == "atomic" || c.dir.name == "ordered") return true;
  static const Names locks = {"omp_set_lock", "omp_test_lock", "omp_set_nest_lock", "omp_test_nest_lock"};
  for (int i = 0; i < cx.t.size(); ++i)
    if (cx.t.ident(i) && !cx.t[i].system && locks.count(cx.t[i].text)) return true;
  return false;
}

std::string lock_shared(const TranslationContext& cx, Construct* c, const Clauses& cl, const std::string& loop_var,
                        const std::string& ind) {
  if (!c->stmt || !uses_exclusion(cx)) return "";
  std::vector<std::string> ex = cl.priv;
  for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.copyin}) ex.insert(ex.end(), l->begin(), l->end());
  for (auto& rd : cl.red) ex.push_back(rd.var);
  for (auto& v : threadprivates_at(cx, c->dir.first_tok)) ex.push_back(v);
  if (!loop_var.empty()) ex.push_back(loop_var);
  std::string out;
  std::vector<std::string> shared =
      cx.decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false);
  // Also the locals the region does not name but a pointer may reach (`long *pc = &count;`
  // then `*pc += v` in a body): OpenMP shares them too, and unregistered their lock writes
  // would stay on the node that made them (a silently wrong total).
  add_reachable_by_pointer(cx, c, ex, shared);
  for (auto& x : shared)
    out += Holes{{"x", x}, {"ind", ind}}.fill(
        "${ind}cape_critical_shared((void *)&$x, sizeof(__typeof__($x))); /* may be written under a lock */\n");
  return out + Holes{{"ind", ind}}.fill("${ind}cape_critical_shared((void *)0, 0); /* that is all of them */\n");
}

void critical(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  for (auto& cl : c->dir.clauses)
    if (cl.name != "hint") cx.d.error_at(cl.tok, "clause '" + cl.name + "' is not valid on 'omp critical'");
  std::string name;
  int after = c->dir.name_toks.back() + 1;
  // (Pragma tokens are compared by their text: they are not the C tokens' kinds.)
  if (after + 1 < c->dir.end_tok && cx.t[after].text == "(") name = cx.t[after + 1].text;
  // The enclosing function's locals the body names, declared before the region.
  Holes h{{"name", "\"" + name + "\""}};
  cx.gen_begin(c, "the master's lock service orders the nodes (docs/critical.md)");
  // A body whose writes are known tells them: its entry captures nothing (docs/critical.md).
  std::optional<std::vector<std::string>> writes;
  if (c->stmt->all.cs.empty()) writes = known_writes(cx.t, c->stmt->all.b, c->stmt->all.e);
  if (writes) {
    cx.d.note_at(name_tok(c->dir), "'omp critical' body writes " + std::to_string(writes->size()) +
                                       " object(s) it names: nothing is captured at its entry, its exit looks at "
                                       "their pages only (docs/critical.md)");
    std::string list;
    for (const std::string& w : *writes) list += w + ", ";
    h.set("w", gen_name("writes", c->id)).set("list", list + "{0, 0}");
    cx.gen(h.fill("  if (cape_cc_distributed()) {\n"
                  "    struct cape_write $w[] = {$list};\n"
                  "    cape_critical_enter_writes($name, $w);\n"
                  "  }\n"));
  } else {
    cx.gen(h.fill("  if (cape_cc_distributed()) cape_critical_enter($name);\n"));
  }
  cx.emit_stmt(c->stmt, enc);
  cx.gen(h.fill("  if (cape_cc_distributed()) cape_critical_exit($name);\n}\n"));
}


// ---- Bodies with known writes (docs/critical.md) ----
// A body made of assignments (`x = e;`, `a[i] += e;`, `p->n++;`, `if (c) ...`) with no call
// can write its targets and nothing else (the compiler's spill slots are the stack, which
// stays home). Their addresses, taken before the body, are those the body writes when no
// target's address reads a variable another target writes, and at most one target has an
// address that reads variables (a write through a pointer could change another's).
namespace {

const Names kAssign = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

struct Target {
  std::string addr, size;  // C expressions
  std::set<std::string> reads;
  std::string base;        // the variable a plain target (x, x.f) names
  bool variable = false;   // its address reads variables
  bool deep = false;       // ... and memory through a pointer or an element (p->q->v, a[b[i]])
};

// Tokens [b, e) read memory and compute, nothing more: no call, assignment, ++, --,
// comma, braces or pragma.
bool pure(const Tokens& t, int b, int e) {
  for (int i = b; i < e; i++) {
    const Token& k = t[i];
    if (k.kind == TokKind::PragmaStart) return false;
    if (k.kind == TokKind::Punct && (kAssign.count(k.text) || k.text == "++" || k.text == "--" || k.text == "," ||
                                     k.text == "{" || k.text == "}" || k.text == ";"))
      return false;
    if (k.kind == TokKind::Ident && t.punct(i + 1, "(")) return false;  // a call
    if (k.kind == TokKind::Keyword && k.text != "sizeof" && t.punct(i + 1, "(") && i + 1 < e) {
      // sizeof(...) and casts are fine; anything else followed by '(' (asm, _Generic...) is not
      static const Names ok = {"int", "long", "short", "char", "unsigned", "signed", "double", "float", "_Bool",
                               "const", "volatile", "struct", "union", "enum", "_Alignof"};
      if (!ok.count(k.text)) return false;
    }
  }
  return true;
}

std::string text(const Tokens& t, int b, int e) {
  std::string s;
  for (int i = b; i < e; i++) s += (s.empty() ? "" : " ") + t[i].text;
  return s;
}

// An lvalue: ID, *ID, or ID followed by [..], .m, ->m. Its object is taken whole up to its
// trailing members (a bit-field has no address): x.f -> x, p->f.g -> *p.
std::optional<Target> target(const Tokens& t, int b, int e) {
  Target x;
  if (t.punct(b, "*")) {
    if (e != b + 2 || !t.ident(b + 1)) return std::nullopt;
    x.addr = "(" + t[b + 1].text + ")";
    x.size = "sizeof(*(" + t[b + 1].text + "))";
    x.reads.insert(t[b + 1].text);
    x.variable = true;
    return x;
  }
  if (!t.ident(b)) return std::nullopt;
  struct Access {
    int tok;
    char kind;  // '[', '.', '>'
  };
  std::vector<Access> acc;
  for (int i = b + 1; i < e;) {
    if (t.punct(i, "[")) {
      int m = t.match(i);
      if (m < 0 || m >= e || !pure(t, i + 1, m)) return std::nullopt;
      for (int k = i + 1; k < m; k++)
        if (t.ident(k) && !t.punct(k - 1, ".") && !t.punct(k - 1, "->")) x.reads.insert(t[k].text);
      acc.push_back({i, '['});
      i = m + 1;
    } else if ((t.punct(i, ".") || t.punct(i, "->")) && t.ident(i + 1)) {
      acc.push_back({i, t.punct(i, ".") ? '.' : '>'});
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  size_t j = acc.size();  // the trailing members start at acc[j]
  while (j > 0 && acc[j - 1].kind != '[') j--;
  int object_end = e;
  bool deref = false;
  for (size_t k = j; k < acc.size(); k++)
    if (acc[k].kind == '>') object_end = acc[k].tok, deref = true;  // the struct the last -> points at
  if (!deref && j < acc.size()) object_end = acc[j].tok;
  for (const Access& a : acc) x.variable = x.variable || a.kind != '.';
  // Memory read to find the object (not only named variables): a deref'd pointer that is
  // itself an element or a member (p->q->v: p->q), two subscripts or members through
  // pointers (a[i][j] may be a pointer's element), an index reading more than variables.
  int reads_through = 0;
  for (const Access& a : acc)
    if (a.tok < object_end && a.kind != '.') reads_through++;
  for (const Access& a : acc)
    if (a.kind == '[')
      for (int k = a.tok + 1; k < t.match(a.tok); k++)
        if (t.punct(k, "[") || t.punct(k, "->") || t.punct(k, ".") || t.punct(k, "*") || t.punct(k, "&")) x.deep = true;
  x.deep = x.deep || reads_through >= (deref ? 1 : 2);
  std::string obj = text(t, b, object_end);
  x.addr = deref ? "(" + obj + ")" : "&(" + obj + ")";
  x.size = deref ? "sizeof(*(" + obj + "))" : "sizeof(" + obj + ")";
  if (x.variable) x.reads.insert(t[b].text);
  else x.base = t[b].text;
  return x;
}

// The end of the statement that starts at token s (-1: none before e).
int statement_end(const Tokens& t, int s, int e) {
  if (s >= e) return -1;
  if (t.punct(s, "{")) {
    int m = t.match(s);
    return m < 0 || m >= e ? -1 : m + 1;
  }
  if (t[s].kind == TokKind::Keyword && t[s].text == "if") {
    if (!t.punct(s + 1, "(")) return -1;
    int m = t.match(s + 1);
    if (m < 0 || m >= e) return -1;
    int se = statement_end(t, m + 1, e);
    if (se >= 0 && se < e && t[se].kind == TokKind::Keyword && t[se].text == "else") return statement_end(t, se + 1, e);
    return se;
  }
  for (int i = s; i < e; i++) {
    if (t.punct(i, ";")) return i + 1;
    if (t.opens(i)) i = t.match(i);
    if (i < 0) return -1;
  }
  return -1;
}

// Statements [b, e): ';', '{...}', if (pure) S [else S], or one assignment.
bool statements(const Tokens& t, int b, int e, std::vector<Target>& out) {
  for (int i = b; i < e;) {
    if (t.punct(i, ";")) {
      i++;
      continue;
    }
    if (t.punct(i, "{")) {
      int m = t.match(i);
      if (m < 0 || m >= e || !statements(t, i + 1, m, out)) return false;
      i = m + 1;
      continue;
    }
    if (t[i].kind == TokKind::Keyword && t[i].text == "if") {
      if (!t.punct(i + 1, "(")) return false;
      int m = t.match(i + 1);
      if (m < 0 || m >= e || !pure(t, i + 2, m)) return false;
      int s = m + 1, se = statement_end(t, s, e);
      if (se < 0 || !statements(t, s, se, out)) return false;
      i = se;
      if (i < e && t[i].kind == TokKind::Keyword && t[i].text == "else") {
        int ee = statement_end(t, i + 1, e);
        if (ee < 0 || !statements(t, i + 1, ee, out)) return false;
        i = ee;
      }
      continue;
    }
    int end = i;  // the ';' that ends the expression statement
    while (end < e && !t.punct(end, ";")) {
      if (t.opens(end)) end = t.match(end);
      if (end < 0) return false;
      end++;
    }
    if (end >= e) return false;
    int op = -1;
    for (int k = i; k < end; k++) {
      if (t.opens(k)) k = t.match(k);
      else if (t[k].kind == TokKind::Punct && kAssign.count(t[k].text)) {
        op = k;
        break;
      }
    }
    std::optional<Target> x;
    if (op >= 0) {
      if (!pure(t, op + 1, end)) return false;
      x = target(t, i, op);
    } else if (t.punct(i, "++") || t.punct(i, "--")) {
      x = target(t, i + 1, end);
    } else if (end - 1 > i && (t.punct(end - 1, "++") || t.punct(end - 1, "--"))) {
      x = target(t, i, end - 1);
    }
    if (!x) return false;
    out.push_back(std::move(*x));
    i = end + 1;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> known_writes(const Tokens& t, int b, int e) {
  std::vector<Target> all;
  if (!statements(t, b, e, all) || all.empty()) return std::nullopt;
  std::set<std::string> seen, bases;
  int variable = 0;
  for (const Target& x : all) {
    variable += x.variable;
    if (!x.base.empty()) bases.insert(x.base);
  }
  if (variable > 1) return std::nullopt;
  // A plain target could be the memory a deep one's address reads (s.q = &t; p->q->v = 1).
  for (const Target& x : all)
    if (x.deep && all.size() > 1) return std::nullopt;
  std::vector<std::string> out;
  for (const Target& x : all) {
    for (const std::string& r : x.reads)
      if (bases.count(r)) return std::nullopt;
    std::string item = "{(void *)" + x.addr + ", " + x.size + "}";
    if (seen.insert(item).second) out.push_back(item);
  }
  if (out.size() > 16) return std::nullopt;  // CAPE_CRITICAL_MAX_WRITES
  return out;
}

}  // namespace cape::tr
