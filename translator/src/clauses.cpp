// Clause reading as a table: one entry per clause name, saying whether it needs
// `(arguments)` and what reading it does. A clause valid on the construct that has no entry
// is a simd hint (safelen, simdlen, aligned, nontemporal, order), dropped with a note.
#include "clauses.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "driver.h"

namespace cape::tr {

const Names kParallelClauses = {"if", "num_threads", "default", "private", "firstprivate",
                                "shared", "copyin", "reduction", "proc_bind"};
const Names kForClauses = {"private", "firstprivate", "lastprivate", "reduction",
                           "schedule", "collapse", "ordered", "nowait"};
const Names kSectionsClauses = {"private", "firstprivate", "lastprivate", "reduction", "nowait"};
const Names kSingleClauses = {"private", "firstprivate", "copyprivate", "nowait"};
// OpenMP 5's `loop` (bound to the parallel region: a `for`); order(concurrent) holds for
// any distribution.
const Names kLoopClauses = {"bind", "collapse", "order", "private", "lastprivate", "reduction"};
const Names kSimdClauses = {"safelen", "simdlen", "linear", "aligned", "private", "lastprivate",
                            "reduction", "collapse", "nontemporal", "order", "if"};

Names unite(const Names& a, const Names& b, std::string_view minus) {
  Names r = a;
  r.insert(b.begin(), b.end());
  if (!minus.empty()) r.erase(std::string(minus));
  return r;
}

namespace {

// The reading of one construct's clauses.
class Reader {
 public:
  Reader(Driver& d, const Tokens& t, bool whole_team) : d_(d), t_(t), whole_team_(whole_team) {}

  Clauses r;

  void error(int tok, const std::string& m) {
    d_.error_at(tok, m);
    r.ok = false;
  }
  void note(int tok, const std::string& m) { d_.note_at(tok, m); }
  void note_once(const std::string& key, int tok, const std::string& m) { d_.note_once(key, tok, m); }
  const std::string& text(int k) const { return t_[k].text; }
  std::string text(const std::vector<int>& toks) const { return t_.text(toks); }

  // `name, name, ...` from args[from..] of a clause: plain variable names only.
  std::vector<std::pair<std::string, int>> var_list(const Clause& cl, size_t from) {
    std::vector<std::pair<std::string, int>> v;
    const auto& a = cl.args;
    if (from >= a.size()) {
      error(from ? a.back() : cl.tok, "expected a variable name in clause '" + cl.name + "'");
      return v;
    }
    for (size_t k = from; k < a.size(); ++k) {
      const auto& s = text(a[k]);
      if ((k - from) % 2 == 1) {
        if (s != ",") {
          error(a[k], "expected ',' in the list of clause '" + cl.name + "', found '" + s + "'" +
                          (s == "[" || s == "." || s == "->"
                               ? " (array sections and members are not supported)"
                               : ""));
          return v;
        }
        if (k + 1 == a.size()) error(a[k], "expected a variable name after ',' in clause '" + cl.name + "'");
        continue;
      }
      if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) {
        error(a[k], "expected a variable name in clause '" + cl.name + "', found '" + s + "'");
        return v;
      }
      v.emplace_back(s, a[k]);
    }
    return v;
  }

  // A variable may appear in one data-sharing clause of a construct, except firstprivate
  // together with lastprivate (OpenMP 4.5 Sect. 2.15.3).
  void note_var(const Clause& cl, const std::string& name, int tok) {
    if (cl.name == "copyin" || cl.name == "copyprivate") return;
    auto it = seen_.find(name);
    if (it == seen_.end()) {
      seen_[name] = cl.name;
      return;
    }
    std::set<std::string> pair = {it->second, cl.name};
    if (pair == std::set<std::string>{"firstprivate", "lastprivate"}) return;
    if (!reported_.insert(name).second) return;  // once per variable
    error(tok, it->second == cl.name
                   ? "variable '" + name + "' appears twice in '" + cl.name + "' clauses"
                   : "variable '" + name + "' appears in both '" + it->second + "' and '" + cl.name + "' clauses");
  }

  bool whole_team() const { return whole_team_; }

 private:
  Driver& d_;
  const Tokens& t_;
  bool whole_team_;
  std::map<std::string, std::string> seen_;  // variable -> the first clause naming it
  std::set<std::string> reported_;           // variables already reported
};

// private, shared, firstprivate, lastprivate, copyin, copyprivate: a list of variables.
void variable_list(Reader& R, const Clause& cl, std::vector<std::string> Clauses::*dst) {
  const auto& a = cl.args;
  if (cl.name == "lastprivate" && a.size() > 2 && R.text(a[1]) == ":") {
    R.error(cl.tok, "clause 'lastprivate(" + R.text(a[0]) + ": ...)': modifiers are not supported");
    return;
  }
  for (auto& [name, tok] : R.var_list(cl, 0)) {
    (R.r.*dst).push_back(name);
    R.note_var(cl, name, tok);
  }
}

// reduction(op: list); OpenMP 5 modifiers (inscan, task, default) are not supported.
void reduction(Reader& R, const Clause& cl) {
  const auto& a = cl.args;
  size_t colon = 0;
  while (colon < a.size() && R.text(a[colon]) != ":") ++colon;
  if (colon == a.size()) return R.error(cl.tok, "clause 'reduction' needs 'operator: list'");
  if (colon >= 2 && R.text(a[1]) == ",")
    return R.error(a[0], "reduction modifier '" + R.text(a[0]) + "' is not supported");
  std::string op = R.text(std::vector<int>(a.begin(), a.begin() + colon));
  static const Names ops = {"+", "*", "-", "&", "|", "^", "&&", "||", "min", "max"};
  if (!ops.count(op))
    return R.error(colon ? a[0] : cl.tok,
                   "unknown reduction operator '" + op +
                       "' (one of + * - & | ^ && || min max; 'declare reduction' is not supported)");
  // The list: variables and array sections `v[lo:len]`, `v[:len]`, `v[lo:]` (one dimension).
  size_t k = colon + 1;
  if (k >= a.size()) return R.error(a.back(), "expected a variable name in clause 'reduction'");
  while (k < a.size()) {
    size_t end = k;
    int depth = 0;
    for (; end < a.size(); ++end) {
      const std::string& s = R.text(a[end]);
      if (s == "[" || s == "(") ++depth;
      else if (s == "]" || s == ")") --depth;
      else if (s == "," && depth == 0) break;
    }
    const std::string& name = R.text(a[k]);
    if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
      return R.error(a[k], "expected a variable name in clause 'reduction', found '" + name + "'");
    Reduction rd;
    rd.op = op, rd.var = name, rd.tok = a[k];
    if (end > k + 1) {
      // name [ lo : len ]
      if (R.text(a[k + 1]) != "[" || R.text(a[end - 1]) != "]")
        return R.error(a[k + 1], "expected ',' or an array section '" + name + "[lo:len]' in clause 'reduction', found '" +
                                     R.text(a[k + 1]) + "'" +
                                     (R.text(a[k + 1]) == "." || R.text(a[k + 1]) == "->" ? " (members are not supported)" : ""));
      size_t c2 = k + 2;
      int d2 = 0;
      for (; c2 < end - 1; ++c2) {
        const std::string& s = R.text(a[c2]);
        if (s == "[" || s == "(") ++d2;
        else if (s == "]" || s == ")") --d2;
        else if (s == ":" && d2 == 0) break;
      }
      if (c2 >= end - 1)
        return R.error(a[k + 1], "array section '" + name + "[...]' in clause 'reduction' needs a ':' (lo:len)");
      for (size_t x = k + 2; x < end - 1; ++x)
        if (R.text(a[x]) == "]" && x + 1 < end - 1 && R.text(a[x + 1]) == "[")
          return R.error(a[x + 1], "array sections of more than one dimension are not supported yet in clause 'reduction'");
      rd.section = true;
      rd.lo = R.text(std::vector<int>(a.begin() + k + 2, a.begin() + c2));
      rd.len = R.text(std::vector<int>(a.begin() + c2 + 1, a.begin() + end - 1));
    }
    R.r.red.push_back(rd);
    R.note_var(cl, name, a[k]);
    if (end < a.size() && end + 1 == a.size())
      return R.error(a[end], "expected a variable name after ',' in clause 'reduction'");
    k = end + 1;
  }
}

void default_(Reader& R, const Clause& cl) {
  std::string v = R.text(cl.args);
  if (v == "none") R.r.default_none = true;
  else if (v != "shared") R.error(cl.tok, "clause 'default(" + v + ")': expected 'shared' or 'none'");
}

void num_threads(Reader& R, const Clause& cl) {
  R.r.num_threads = "(" + R.text(cl.args) + ")";
}

// if([parallel :] expr)
void if_(Reader& R, const Clause& cl) {
  std::vector<int> e = cl.args;
  if (e.size() > 2 && R.text(e[1]) == ":") e.erase(e.begin(), e.begin() + 2);
  R.r.cond = "(" + R.text(e) + ")";
}

// schedule([modifier:] kind[, chunk]): every kind runs as static (with its chunk).
void schedule(Reader& R, const Clause& cl) {
  std::vector<int> e = cl.args;
  auto colon = std::find_if(e.begin(), e.end(), [&](int k) { return R.text(k) == ":"; });
  if (colon != e.end()) e.erase(e.begin(), colon + 1);  // monotonic: etc.
  std::string kind = e.empty() ? "" : R.text(e[0]);
  std::vector<int> chunk;
  if (e.size() > 2 && R.text(e[1]) == ",") chunk.assign(e.begin() + 2, e.end());
  if (kind != "static" && kind != "dynamic" && kind != "guided" && kind != "auto" && kind != "runtime")
    return R.error(cl.tok, "unknown schedule kind '" + kind + "'");
  if ((kind == "static" || kind == "dynamic" || kind == "guided") && !chunk.empty())
    R.r.chunk = "(" + R.text(chunk) + ")";
  if (kind != "static")
    R.note_once("schedule", cl.tok, "schedule(" + kind + ") is run as schedule(static" +
                       (chunk.empty() || kind == "auto" || kind == "runtime" ? std::string("")
                                                                             : ", " + R.text(chunk)) +
                       "): CAPE distributes every chunk before the loop starts");
}

void collapse(Reader& R, const Clause& cl) {
  std::string n = R.text(cl.args);
  if (n.size() == 1 && n[0] >= '1' && n[0] <= '8') {
    R.r.collapse = n[0] - '0';
    return;
  }
  R.error(cl.tok, "clause 'collapse(" + n + ")': expected a constant from 1 to 8" +
                      (n.find_first_not_of("0123456789") != std::string::npos
                           ? std::string(" (cape-cc expands macros first; cape-translate does with -E)")
                           : std::string("")));
}

struct Rule {
  bool needs_args;  // `name(arguments)`
  void (*read)(Reader&, const Clause&);
};

template <std::vector<std::string> Clauses::*dst>
void list(Reader& R, const Clause& cl) {
  variable_list(R, cl, dst);
}

const std::map<std::string, Rule, std::less<>> kRules = {
    {"private", {true, list<&Clauses::priv>}},
    {"shared", {true, list<&Clauses::shared>}},
    {"firstprivate", {true, list<&Clauses::firstpriv>}},
    {"lastprivate", {true, list<&Clauses::lastpriv>}},
    {"copyin", {true, list<&Clauses::copyin>}},
    {"copyprivate", {true, list<&Clauses::copypriv>}},
    {"reduction", {true, reduction}},
    {"default", {true, default_}},
    {"num_threads", {true, num_threads}},
    {"if", {true, if_}},
    {"schedule", {true, schedule}},
    {"collapse", {true, collapse}},
    {"linear", {false, [](Reader& R, const Clause& cl) {
       R.error(cl.tok, "clause 'linear' is not supported yet (it belongs to the dropped simd part)");
     }}},
    {"ordered", {false, [](Reader& R, const Clause& cl) {
       // The loop's `ordered` blocks go through the master's lock service in iteration order
       // (templates/ordered.cpp); doacross loops do not.
       if (cl.has_parens)
         R.error(cl.tok, "clause 'ordered(n)' (a doacross loop) is not supported by CAPE: only the "
                         "'ordered' clause with 'omp ordered' blocks");
     }}},
    {"bind", {true, [](Reader& R, const Clause& cl) {
       std::string b = R.text(cl.args);
       if (b == "teams")
         R.error(cl.tok, "clause 'bind(teams)' is not supported by CAPE: there are no teams, only the nodes of one team");
       else if (b != "parallel" && b != "thread")
         R.error(cl.tok, "clause 'bind(" + b + ")': expected 'parallel', 'thread' or 'teams'");
       else R.r.bind_thread = b == "thread";
     }}},
    {"order", {true, [](Reader& R, const Clause& cl) {
       std::string o = R.text(cl.args);
       if (o != "concurrent" && o != "reproducible : concurrent" && o != "unconstrained : concurrent")
         R.error(cl.tok, "clause 'order(" + o + ")': expected 'concurrent'");
     }}},
    {"nowait", {false, [](Reader& R, const Clause&) { R.r.nowait = true; }}},
    {"proc_bind", {false, [](Reader& R, const Clause& cl) {
       R.note(cl.tok, "clause 'proc_bind' has no effect: each thread is a node");
     }}},
};

}  // namespace

Clauses read_clauses(Driver& d, const Tokens& t, const Directive& dir, const Names& allowed,
                     bool whole_team) {
  Reader R(d, t, whole_team);
  // One error per problem: a clause repeated (or invalid) many times is reported once, at
  // its first place, with the count.
  static const Names once = {"if", "num_threads", "default", "schedule", "collapse", "ordered",
                             "nowait", "proc_bind", "safelen", "simdlen", "order"};
  std::map<std::string, int> count;
  for (auto& cl : dir.clauses) ++count[cl.name];
  std::map<std::string, int> first;
  for (auto& cl : dir.clauses) {
    bool repeat = !first.emplace(cl.name, cl.tok).second;
    if (!allowed.count(cl.name)) {
      if (!repeat)
        R.error(cl.tok, "clause '" + cl.name + "' is not valid on 'omp " + dir.name + "'" +
                            (count[cl.name] > 1 ? " (given " + std::to_string(count[cl.name]) + " times)" : ""));
      continue;
    }
    if (repeat && once.count(cl.name)) {
      if (count[cl.name] > 0) {
        int tok = first[cl.name];
        R.error(cl.tok, "clause '" + cl.name + "' may appear once on 'omp " + dir.name + "', given " +
                            std::to_string(count[cl.name]) + " times (first at column " +
                            std::to_string(d.user_col(tok)) + ")");
        count[cl.name] = 0;  // reported
      }
      continue;
    }
    auto rule = kRules.find(cl.name);
    if (rule == kRules.end()) {
      R.note(cl.tok, "clause '" + cl.name + "' dropped with 'simd'");
      continue;
    }
    if (rule->second.needs_args) {
      // `name()` was reported by the directive parser already.
      if (!cl.has_parens) R.error(cl.tok, "clause '" + cl.name + "' needs an argument in parentheses");
      if (!cl.has_parens || cl.args.empty()) continue;
    }
    rule->second.read(R, cl);
  }
  return std::move(R.r);
}

}  // namespace cape::tr
