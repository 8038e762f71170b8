#include "templates/data_sharing.h"

#include <algorithm>
#include <map>

#include "code.h"
#include "directive.h"

namespace cape::tr {
namespace {

std::string red_op(const std::string& op) {
  static const std::map<std::string, std::string> m = {
      {"+", "CAPE_RED_ADD"},   {"*", "CAPE_RED_MUL"},  {"-", "CAPE_RED_SUB"},
      {"&", "CAPE_RED_BAND"},  {"|", "CAPE_RED_BOR"},  {"^", "CAPE_RED_BXOR"},
      {"&&", "CAPE_RED_LAND"}, {"||", "CAPE_RED_LOR"}, {"min", "CAPE_RED_MIN"},
      {"max", "CAPE_RED_MAX"}};
  return m.at(op);
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// `tmpl` filled once per variable $x, with $<stem> the name of x's copy for each stem.
std::string each(const std::vector<std::string>& vars, int id, std::initializer_list<std::string_view> stems,
                 std::string_view tmpl, const Holes& base = {}) {
  std::string r;
  for (auto& x : vars) {
    Holes h = base.with("x", x);
    for (auto stem : stems) h.set(stem, gen_name(stem, id, x));
    r += h.fill(tmpl);
  }
  return r;
}

// The variables a region names that its clauses do not (the implicitly shared ones are
// among them): every clause's, the visible threadprivate ones and the loop variable.
std::vector<std::string> clause_vars(const TranslationContext& cx, Construct* c, const Clauses& cl,
                                     const std::string& loop_var, bool with_shared) {
  std::vector<std::string> ex = cl.priv;
  for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.shared, &cl.copyin})
    if (l != &cl.shared || with_shared) ex.insert(ex.end(), l->begin(), l->end());
  for (auto& rd : cl.red) ex.push_back(rd.var);
  for (auto& v : threadprivates_at(cx, c->dir.first_tok)) ex.push_back(v);
  if (!loop_var.empty()) ex.push_back(loop_var);
  return ex;
}

}  // namespace

std::vector<std::string> threadprivates_at(const TranslationContext& cx, int at) {
  std::vector<std::string> r;
  for (auto& tp : cx.threadprivates)
    if (tp.b < at && at < tp.e && !contains(r, tp.var)) r.push_back(tp.var);
  return r;
}

std::string clause_calls(const TranslationContext& cx, const Clauses& cl, int at, const std::string& ind,
                         bool with_private) {
  Holes h{{"ind", ind}};
  auto set = [&](const char* fn, const std::vector<std::string>& v) {
    std::string r;
    // sizeof of the type: a parameter declared `T x[]` is a pointer, and gcc warns at sizeof(x).
    for (auto& x : v) r += h.with("fn", fn).with("x", x).fill("${ind}$fn((void *)&$x, sizeof(__typeof__($x)));\n");
    return r;
  };
  // Every file's threadprivates first (those not visible here too), then the visible ones.
  std::string r = cx.opt.mt ? "" : h.fill("${ind}CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */\n");
  r += set("cape_set_threadprivate", threadprivates_at(cx, at));
  if (cl.default_none) r += h.fill("${ind}cape_set_default_none();\n");
  r += set("cape_set_shared", cl.shared);
  if (with_private) {
    r += set("cape_set_private", cl.priv);
    r += set("cape_set_firstprivate", cl.firstpriv);
  }
  r += set("cape_set_lastprivate", cl.lastpriv);
  return r + reduction_calls(cl, ind, cx.opt.tickpt);
}

std::string reduction_calls(const Clauses& cl, const std::string& ind, bool tickpt,
                            const std::vector<std::string>& rest_shared) {
  std::string r;
  for (auto& rd : cl.red) {
    Holes h{{"ind", ind}, {"x", rd.var}, {"op", red_op(rd.op)}, {"a", rd.addr}, {"s", rd.size}, {"e", rd.elem}};
    r += h.fill("${ind}cape_reduction($a, $s, $op, CAPE_CC_TYPE($e));\n");
    // TICKPT (or a `shared` clause of the region, rest_shared): the rest of a section's
    // array is shared as the array would be (registered around the section: the monitor
    // refuses overlapping registrations).
    if (rd.section && (tickpt || contains(rest_shared, rd.var)))
      r += h.fill(R"c(${ind}{
${ind}  char *cape_x_ = (char *)(void *)&$x, *cape_a_ = (char *)$a, *cape_e_ = cape_a_ + $s;
${ind}  if (cape_a_ > cape_x_) cape_set_shared(cape_x_, (unsigned long)(cape_a_ - cape_x_));
${ind}  if (cape_e_ < cape_x_ + sizeof($x)) cape_set_shared(cape_e_, (unsigned long)(cape_x_ + sizeof($x) - cape_e_));
${ind}}
)c");
  }
  return r;
}

void resolve_reductions(TranslationContext& cx, Clauses& cl, int at) {
  for (auto& rd : cl.red) {
    const std::string& x = rd.var;
    int dims = cx.decls().array_dims(x, at);
    std::string zeros;
    for (int k = 1; k < dims; ++k) zeros += "[0]";
    if (!rd.section) {
      rd.addr = "(void *)&" + x;
      rd.size = "sizeof(" + x + ")";
      rd.elem = dims > 0 ? x + "[0]" + zeros : x;  // an array: every element is reduced
      continue;
    }
    if (dims <= 0) {
      cx.d.error_at(rd.tok, "array section '" + x + "[" + rd.lo + ":" + rd.len + "]' in clause 'reduction': '" + x +
                                "' must be an array declared in this file (a section of a pointer is not supported yet)");
      cl.ok = false;
      continue;
    }
    if (cx.opt.tickpt && cx.decls().file_scope_var(x, at)) {
      // A section that is the whole array (`y[:N]` of `double y[N]`, PolyBench's style) is the
      // array: reduced whole, like the registration of every file-scope variable.
      if ((rd.lo.empty() || rd.lo == "0") && (rd.len.empty() || rd.len == cx.decls().first_extent(x, at))) {
        rd.section = false;
        rd.addr = "(void *)&" + x;
        rd.size = "sizeof(" + x + ")";
        rd.elem = x + "[0]" + zeros;
        continue;
      }
      cx.d.error_at(rd.tok, "array section '" + x + "[" + rd.lo + ":" + rd.len + "]' in clause 'reduction' of a file-scope "
                                "array under --ckpt=tickpt is not supported yet (every file-scope variable is registered "
                                "shared whole); reduce the whole array, or use --ckpt=dickpt");
      cl.ok = false;
      continue;
    }
    std::string lo = rd.lo.empty() ? "0" : rd.lo;
    std::string len = rd.len.empty() ? "(sizeof(" + x + ") / sizeof((" + x + ")[0]) - (" + lo + "))" : "(" + rd.len + ")";
    rd.addr = "(void *)&(" + x + ")[" + lo + "]";
    rd.size = len + " * sizeof((" + x + ")[0])";
    rd.elem = "(" + x + ")[0]" + zeros;
  }
}

std::string save_reduction(const Reduction& rd, const std::string& save) {
  if (rd.whole()) return "CAPE_CC_SAVE(" + save + ", " + rd.var + ");";
  return "CAPE_CC_SAVE_BYTES(" + save + ", " + rd.addr + ", " + rd.size + ");";
}

std::string restore_reduction(const Reduction& rd, const std::string& save) {
  if (rd.whole()) return "CAPE_CC_RESTORE(" + rd.var + ", " + save + ");";
  return "__builtin_memcpy(" + rd.addr + ", (const void *)&" + save + ", " + rd.size + ");";
}

void reduction_checks(TranslationContext& cx, const Clauses& cl) {
  for (auto& rd : cl.red) {
    int col = cx.d.user_col(rd.tok);  // gcc's error then points at the variable in the pragma
    bool bitwise = rd.op == "&" || rd.op == "|" || rd.op == "^";
    cx.line_at(rd.tok);
    cx.em.raw(Holes{{"indent", std::string(col > 1 ? col - 1 : 0, ' ')},
                    {"test", bitwise ? "CAPE_CC_IS_INTEGER" : "CAPE_CC_TYPE"},
                    {"op", rd.op},
                    {"x", rd.section ? rd.var + "[" + rd.lo + ":" + rd.len + "]" : rd.var},
                    {"e", rd.elem},
                    {"type", bitwise ? "an integer type (char, short, int, long, long long, signed or unsigned)"
                                     : "an arithmetic type (char, short, int, long, long long, signed or "
                                       "unsigned, float or double)"}}
                  .fill("${indent}_Static_assert($test($e) != 0, \"reduction($op: $x): $x must have $type\");\n"));
  }
}

bool check_vars(TranslationContext& cx, Construct* c, Clauses& cl, const std::string& loop_var) {
  const Tokens& t = cx.t;
  resolve_reductions(cx, cl, c->dir.first_tok);
  auto error = [&](int tok, const std::string& m) {
    cx.d.error_at(tok, m);
    cl.ok = false;
  };
  auto tp = threadprivates_at(cx, c->dir.first_tok);
  for (auto& cla : c->dir.clauses) {
    if (cla.name != "copyin" || cla.args.empty()) continue;
    for (int k : cla.args)
      if (t[k].text != "," && !contains(tp, t[k].text))
        error(k, "'" + t[k].text + "' in clause 'copyin' is not threadprivate (declare it "
                 "with '#pragma omp threadprivate(" + t[k].text + ")' first)");
  }
  // default(none) (OpenMP 4.5 Sect. 2.15.1.1): every variable the construct names must be
  // listed; gcc checks it only with -fopenmp, which cape-cc does not pass on.
  if (cl.default_none && c->stmt) {
    auto listed_v = clause_vars(cx, c, cl, loop_var, true);
    Names listed(listed_v.begin(), listed_v.end());
    int b = c->stmt->all.b, e = c->stmt->all.e;
    for (auto& n : cx.decls().implicitly_shared(c->dir.first_tok, b, e, {})) {
      if (listed.count(n)) continue;
      for (int i = b; i < e; ++i) {
        if (t.skip_pragma(i, e)) continue;
        if (t.ident(i, n) && !t.punct(i - 1, ".") && !t.punct(i - 1, "->")) {
          error(i, "'" + n + "' is not listed in a data-sharing clause of 'omp " + c->dir.name +
                       "', which has default(none)");
          break;
        }
      }
    }
  }
  // `for (int i = ...)` declares i for the loop only: nothing outside could see its last value.
  if (!loop_var.empty() && c->stmt && c->stmt->kind == Stmt::For && c->stmt->header.b >= 0 &&
      !t.punct(c->stmt->header.b + 1, "=") && contains(cl.lastpriv, loop_var))
    for (auto& cla : c->dir.clauses)
      if (cla.name == "lastprivate")
        for (int k : cla.args)
          if (t[k].text == loop_var)
            error(k, "'" + loop_var + "' in clause 'lastprivate' is declared by the loop (it is not visible after it)");
  if (!loop_var.empty())
    for (auto& rd : cl.red)
      if (rd.var == loop_var) error(rd.tok, "the loop variable '" + loop_var + "' may not appear in clause 'reduction'");
  return cl.ok;
}

// The values are flipped before start() so that putting them back is a change the master's
// `copyin` checkpoint carries; the slaves inject it.
std::string copyin_code(const Clauses& cl, int id) {
  if (cl.copyin.empty()) return "";
  Holes h{{"declare", each(cl.copyin, id, {"ci"}, "    static __thread __typeof__($x) $ci;\n")},
          {"flip", each(cl.copyin, id, {"ci"},
                        "      CAPE_CC_SAVE($ci, $x); CAPE_CC_FLIP($x);\n"
                        "      cape_set_copyin((void *)&$x, sizeof($x));\n")},
          {"restore", each(cl.copyin, id, {"ci"}, "      CAPE_CC_RESTORE($x, $ci);\n")}};
  return h.fill(R"c(    /* copyin: the master's threadprivate values, to every node */
$declare
    if (cape_master()) {
$flip
      cape_start();
$restore
      cape_create("copyin");
      cape_stop();
      cape_broadcast("copyin");
    } else {
      cape_receive("copyin");
      cape_inject("copyin");
    }
)c");
}

// private and firstprivate: both get their bytes back before create() (every node holds
// the master's value when the region starts, so firstprivate needs nothing more).
std::vector<std::string> privates_of(const Clauses& cl) {
  std::vector<std::string> v;
  for (auto* l : {&cl.priv, &cl.firstpriv})
    for (auto& x : *l)
      if (!contains(v, x) && !contains(cl.lastpriv, x)) v.push_back(x);
  return v;
}

std::vector<std::string> with(std::vector<std::string> v, const std::string& x) {
  if (!contains(v, x)) v.insert(v.begin(), x);
  return v;
}

std::vector<std::string> without(std::vector<std::string> v, const std::string& x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
  return v;
}

std::string save_privates(const std::vector<std::string>& v, int id, bool tls) {
  return each(v, id, {"pv"}, "  ${tls}__typeof__($x) $pv;\n  CAPE_CC_SAVE($pv, $x);\n",
              Holes{{"tls", tls ? "static __thread " : ""}});
}

std::string restore_privates(const std::vector<std::string>& v, int id) {
  return each(v, id, {"pv"}, "  CAPE_CC_RESTORE($x, $pv);\n");
}

// lastprivate: the node that ran the sequentially last iteration (or section) keeps its
// value, which its checkpoint carries; every other node puts the original bytes back, so
// exactly one node writes the variable and no merge has to choose.
std::string lastprivate_code(const Clauses& cl, int id, const std::string& is_last, const std::string& final_var) {
  if (cl.lastpriv.empty()) return "";
  Holes h{{"is_last", is_last},
          {"restore", each(cl.lastpriv, id, {"pv"}, "    CAPE_CC_RESTORE($x, $pv);\n")},
          {"var", final_var},
          {"lb", gen_name("lb", id)},
          {"n", gen_name("n", id)},
          {"st", gen_name("st", id)}};
  if (!final_var.empty())
    return h.fill(R"c(  if ($is_last) { /* lastprivate: this node ran the last iteration */
    $var = (__typeof__($var))((unsigned long long)$lb + $n * (unsigned long long)$st);
  } else {
$restore
  }
)c");
  return h.fill(R"c(  if (!$is_last) { /* lastprivate: only the last iteration's node keeps its value */
$restore
  }
)c");
}

// DICKPT: the locals a region shares must live in memory across its runtime calls. A local
// whose address is never taken may stay in a callee-saved register (gcc -O2 does), where
// the writes of another node injected into its stack slot never reach it. Passing its
// address to an empty asm makes it escape, so the compiler stores it before every call
// and reloads it after. (TICKPT's cape_set_shared(&x, ...) calls take the address too.)
std::string in_memory(const TranslationContext& cx, Construct* c, const Clauses& cl, const std::string& loop_var) {
  if (cx.opt.tickpt || !c->stmt) return "";
  auto ex = clause_vars(cx, c, cl, loop_var, /*with_shared=*/false);
  auto vars = cx.decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false);
  return each(vars, c->id, {}, "  CAPE_CC_IN_MEMORY($x);\n");
}

namespace {
// The innermost of a name only (the one `&x` names).
std::vector<std::string> locals_reachable_by_pointer(const TranslationContext& cx, int at, int b, int e) {
  const Declarations& ds = cx.decls();
  std::vector<std::string> r;
  for (auto& d : ds.all()) {
    if (ds.file_scope(d) || d.storage != VarDecl::Auto || !d.addressable()) continue;
    if (!(d.tok < at && at < d.scope_end) || (d.tok >= b && d.tok < e)) continue;
    if (!ds.local_visible(d.name, at) || ds.file_scope_var(d.name, at)) continue;
    bool reachable = ds.array_dims(d.name, at) > 0;
    for (int i = d.tok + 1; !reachable && i < d.scope_end; ++i)
      reachable = cx.t.ident(i, d.name) && cx.t.punct(i - 1, "&");
    if (reachable && std::find(r.begin(), r.end(), d.name) == r.end()) r.push_back(d.name);
  }
  return r;
}
}  // namespace

void add_reachable_by_pointer(const TranslationContext& cx, Construct* c, const std::vector<std::string>& exclude,
                              std::vector<std::string>& vars) {
  for (auto& x : locals_reachable_by_pointer(cx, c->dir.first_tok, c->stmt->all.b, c->stmt->all.e))
    if (std::find(exclude.begin(), exclude.end(), x) == exclude.end() && std::find(vars.begin(), vars.end(), x) == vars.end())
      vars.push_back(x);
}

// 4.1 rule (3) under TICKPT, where the monitor ships only what is registered: every
// translated file's static variables (cape_cc_share_statics) and the enclosing function's
// variables the region names or a pointer may reach, minus the region's clauses. They come first: the monitor keeps
// the later call on a variable, so a clause wins.
std::string tickpt_shared(const TranslationContext& cx, Construct* c, const Clauses& cl,
                          const std::string& loop_var, const std::string& ind) {
  if (!cx.opt.tickpt || !c->stmt) return "";
  auto ex = clause_vars(cx, c, cl, loop_var, /*with_shared=*/true);
  auto vars = cx.decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false);
  add_reachable_by_pointer(cx, c, ex, vars);  // `long *p = arr;` then `p[i] = ...` in the region
  Holes h{{"ind", ind}};
  return h.fill("${ind}cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */\n") +
         each(vars, c->id, {}, "${ind}cape_set_shared((void *)&$x, sizeof(__typeof__($x))); /* implicitly shared (TICKPT) */\n", h);
}

// TICKPT: variables of static storage are shared (002 Sect. 3.1), and a region's functions
// may live in other files. So every translated file registers its own file-scope variables
// (minus threadprivate ones) through a function that libcape_cc calls before every region's
// start() (cape_cc_share_statics), put on libcape_cc's list before main.
std::string statics_function(const TranslationContext& cx) {
  if (!cx.opt.tickpt) return "";
  // Threadprivate variables stay out (this runs before the directives are translated).
  Names tp;
  for (auto& c : cx.d.ast().constructs)
    if (c.dir.name == "threadprivate" && !c.dir.name_toks.empty())
      for (int k = c.dir.name_toks.back() + 1; k < c.dir.end_tok; ++k) tp.insert(cx.t[k].text);
  std::vector<std::string> vars;
  for (auto& d : cx.decls().all())
    if (d.addressable() && cx.decls().file_scope(d) && !tp.count(d.name) && !contains(vars, d.name))
      vars.push_back(d.name);
  if (vars.empty()) return "";
  return Holes{{"shares", each(vars, 0, {}, "  cape_set_shared((void *)&$x, sizeof($x));\n")}}.fill(R"c(
/* cape (TICKPT): this file's variables of static storage are shared (002_2c61c2cb27f62a9a.txt Sect. 3.1), registered before every region's cape_start() (docs/translator.md). */
static void cape_cc_statics(void) {
$shares
}
__attribute__((constructor)) static void cape_cc_statics_init(void) { cape_cc_add_statics(cape_cc_statics); }
)c");
}

// TICKPT: block-scope static variables have static storage too, so they are shared (002
// Sect. 3.1), but the file's statics function cannot name them: main's `static double a[N]`
// passed to a kernel function in another function's region was lost, silently
// (tests/ordinary/programs/polykern.c). After each declaration an entry with its address
// goes to a section that cape_cc_share_statics() registers (cc.h CAPE_CC_STATIC_LOCAL).
void static_locals(TranslationContext& cx) {
  if (!cx.opt.tickpt) return;
  Names tp;  // threadprivate ones stay out, as in statics_function
  for (auto& c : cx.d.ast().constructs)
    if (c.dir.name == "threadprivate" && !c.dir.name_toks.empty())
      for (int k = c.dir.name_toks.back() + 1; k < c.dir.end_tok; ++k) tp.insert(cx.t[k].text);
  const int n = static_cast<int>(cx.t.size());
  for (auto& d : cx.decls().all()) {
    if (d.storage != VarDecl::Static || cx.decls().file_scope(d) || !d.addressable() || d.vla || d.param ||
        tp.count(d.name))
      continue;
    // Not one declared in a construct (a region's own: its nodes would register different
    // lists), nor one a clause names by a section (`reduction(+:h[2:5])`: the region registers
    // the rest of it around the section, which a whole registration would overlap).
    bool skip = false;
    for (auto& c : cx.d.ast().constructs) {
      skip = skip || (d.tok >= c.all.b && d.tok < c.all.e);
      for (int k = c.dir.first_tok; k < c.dir.end_tok && !skip; ++k)
        skip = cx.t[k].text == d.name && k + 1 < c.dir.end_tok && cx.t[k + 1].text == "[";  // (pragma tokens)
    }
    if (skip) continue;
    int k = d.tok + 1, depth = 0;  // the ';' ending the declaration
    for (; k < n; ++k) {
      if (cx.t.punct(k, "(") || cx.t.punct(k, "[") || cx.t.punct(k, "{")) ++depth;
      else if (cx.t.punct(k, ")") || cx.t.punct(k, "]") || cx.t.punct(k, "}")) {
        if (--depth < 0) break;
      } else if (depth == 0 && cx.t.punct(k, ";")) break;
    }
    if (k >= n || !cx.t.punct(k, ";")) continue;
    cx.after_tok[k] += " CAPE_CC_STATIC_LOCAL(cape_sl_" + std::to_string(d.tok) + ", " + d.name + ");";
  }
}

}  // namespace cape::tr
