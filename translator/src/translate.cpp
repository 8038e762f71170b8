// The templates. Each OpenMP construct becomes a block of generated code around the user's
// own statements, which are copied token for token under `#line` directives.
//
// Rules every template keeps (docs/translator.md explains them):
//  - every node runs the same code; what a node writes between cape_start() and
//    cape_create() is its part of the region and reaches the others only by checkpoint;
//  - template bookkeeping inside a tracked window lives in `static __thread` storage (TLS is
//    not tracked) and is reset before the window closes; the rest is written outside windows;
//  - private variables (loop indices, private(list)) get their exact bytes back before every
//    create(), so no checkpoint carries them and they keep their value after the region, as
//    the original variable does with gcc.
#include "translate.h"

#include "canonical_loop.h"
#include "clauses.h"
#include "declarations.h"
#include "directive.h"
#include "last_parallel.h"
#include "emitter.h"
#include "tokens.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>

namespace cape::tr {
namespace {

const Names kLocks = {"omp_init_lock", "omp_set_lock", "omp_unset_lock", "omp_test_lock",
                      "omp_destroy_lock", "omp_init_nest_lock", "omp_set_nest_lock",
                      "omp_unset_nest_lock", "omp_test_nest_lock", "omp_destroy_nest_lock"};

std::string unsupported_reason(const std::string& name) {
  auto starts = [&](std::string_view p) { return name.rfind(p, 0) == 0; };
  if (starts("task")) return "tasks need a shared task pool; CAPE distributes only loops and sections";
  if (name == "critical" || name == "atomic")
    return "mutual exclusion needs shared memory; nodes exchange their writes only at barriers "
           "and at the end of a region";
  if (name == "ordered") return "ordered execution would serialise the nodes iteration by iteration";
  if (name == "flush") return "memory is made consistent only at barriers and at the end of a region";
  if (starts("target") || starts("teams") || starts("distribute") || starts("declare target") ||
      starts("end declare"))
    return "CAPE has no devices to offload to";
  if (starts("cancel")) return "a region cannot be cancelled across nodes";
  if (starts("declare")) return "declarative directives are not supported";
  return "not implemented";
}

struct Ctx {
  int region = 0;                    // id of the lexically enclosing parallel construct
  std::vector<std::string> privates; // its private(list), swapped around barriers
  bool in_ws = false;                // inside a for/sections/single
  int region_b = -1;                 // first token of the region's statement
  std::string calls;                 // its clause calls (Fig. 7), made again before every start()
  bool default_none = false;         // its default(none): unregistered data stays home
  std::vector<std::string> reductions;  // its reduction variables (kept across barriers)
};

// A `#pragma omp threadprivate(list)` and the tokens where its variables are visible.
struct ThreadPrivate {
  std::string var;
  int b = 0, e = 0;
};

class Translator {
 public:
  Translator(Driver& d, const Options& o) : d_(d), o_(o), t_(d.tokens()), em_(escape(d.filename())) {}

  std::string run() {
    check_locks();
    auto& ast = d_.ast();
    last_ = last_parallel(t_, ast);
    // The model, told at the start of main when the file has a directive (or under TICKPT).
    auto fns = function_bodies(t_);
    if (auto m = fns.find("main"); m != fns.end() && (!ast.constructs.empty() || o_.tickpt))
      main_body_ = m->second.b;
    auto& unit = d_.ast().unit;
    bool any = !d_.ast().constructs.empty();
    std::string statics = statics_function();
    if (!any && (main_body_ >= 0 || !statics.empty())) {
      // No directive, but main (where the program tells its monitor the model) or static
      // variables (shared under TICKPT): only under --ckpt=tickpt.
      em_.raw("/* cape-translate --ckpt=tickpt: the model and this file's static variables. */\n"
              "#include <cape/cc.h>\n");
    } else if (any) {
      em_.raw("/* Translated by cape-translate from " + d_.filename() +
              ": OpenMP directives became CAPE runtime calls (docs/translator.md). */\n"
              "#include <cape/cc.h>\n");
      if (uses_desc())
        em_.raw("/* The `before` checkpoints of 001_3036025dc34c4021.txt Fig. 3 carry these. */\n"
                "static cape_share_t cape_desc[CAPE_CC_MAX_NODES] __attribute__((unused));\n");
    }
    em_.line(1);
    if (!unit.empty()) emit_range(unit.b, unit.e, unit.cs, Ctx{}, true, /*exact=*/true);
    // Trailing trivia after the last token lives on the End token.
    if (auto& all = d_.tokens(); !all.empty() && all.back().kind == TokKind::End) em_.raw(all.back().trivia);
    if (!statics.empty()) {
      em_.newline();
      em_.raw(statics);
    }
    return std::move(em_.str());
  }

 private:
  Driver& d_;
  const Options& o_;
  Tokens t_;
  Emitter em_;
  std::set<int> last_;  // ids of constructs that are the program's last parallel region
  std::vector<ThreadPrivate> tps_;  // threadprivate directives met so far
  int main_body_ = -1;              // the '{' of main's body
  mutable std::unique_ptr<Declarations> decls_;  // every declaration, scanned when first needed
  const Declarations& decls() const {
    if (!decls_) decls_ = std::make_unique<Declarations>(t_);
    return *decls_;
  }

  // ---- emission ----
  // Copies tokens [b, e), translating the constructs in cs. `resync` puts a #line before the
  // first token; `exact` keeps the first token's trivia (whole-file copy).
  void emit_range(int b, int e, const std::vector<Construct*>& cs, const Ctx& ctx, bool resync,
                  bool exact = false) {
    size_t ci = 0;
    bool first = true;
    for (int i = b; i < e;) {
      while (ci < cs.size() && cs[ci]->all.b < i) ++ci;
      if (ci < cs.size() && cs[ci]->all.b == i) {
        // Comments and preprocessor lines before the pragma (`#ifdef`...) stay in place.
        const Token& p = t_[i];
        if (p.trivia.find_first_not_of(" \t\r\n\f\v") != std::string::npos) {
          if (first && resync)  // after generated code: say where the trivia starts
            em_.line(p.line - static_cast<int>(std::count(p.trivia.begin(), p.trivia.end(), '\n')));
          em_.raw(p.trivia);
        }
        translate(cs[ci], ctx);
        i = cs[ci]->all.e;
        ++ci;
        resync = true;
        first = true;
        continue;
      }
      const Token& tok = t_[i];
      if (first && resync) {
        int nl = static_cast<int>(std::count(tok.trivia.begin(), tok.trivia.end(), '\n'));
        // Trivia holding preprocessor lines or comments is kept whole; else just indent.
        if (exact || tok.trivia.find_first_not_of(" \t\r\n\f\v") != std::string::npos) {
          em_.line(tok.line - nl);
          em_.raw(tok.trivia);
        } else {
          em_.line(tok.line);
          em_.raw(std::string(tok.col > 1 ? tok.col - 1 : 0, ' '));
        }
      } else {
        em_.raw(tok.trivia);
      }
      em_.raw(tok.text);
      if (i == main_body_)  // the model, told before the first region (cape-cc --ckpt)
        em_.raw(std::string(" cape_set_ckpt_model(") +
                (o_.tickpt ? "CAPE_CKPT_TICKPT" : "CAPE_CKPT_DICKPT") + ");");
      first = false;
      ++i;
    }
  }

  void emit_stmt(Stmt* s, const Ctx& ctx) { emit_range(s->all.b, s->all.e, s->all.cs, ctx, true); }

  // Generated code attributed to the pragma's line.
  void gen_begin(Construct* c, const std::string& what) {
    em_.line(t_[c->dir.first_tok].line);
    em_.raw("{ /* cape: #pragma omp " + c->dir.name + " (" + d_.filename() + ":" +
            std::to_string(t_[c->dir.first_tok].line) + ")" + (what.empty() ? "" : ", " + what) +
            " */\n");
  }
  void gen(const std::string& s) {
    em_.newline();
    em_.raw(s);
  }

  // ---- diagnostics ----
  int name_tok(Construct* c) const {
    return c->dir.name_toks.empty() ? c->dir.first_tok : c->dir.name_toks.front();
  }
  void unsupported(Construct* c, const std::string& reason) {
    d_.error_at(name_tok(c), "'omp " + c->dir.name + "' is not supported by CAPE: " + reason);
  }

  void check_locks() {
    for (int i = 0; i < t_.size(); ++i)
      if (t_.ident(i) && kLocks.count(t_[i].text))
        d_.error_at(i, "'" + t_[i].text +
                           "' is not supported by CAPE: locks need shared memory; nodes exchange "
                           "their writes only at barriers and at the end of a region");
  }

  // Loop variables and bounds, evaluated once (OpenMP leaves the number of evaluations open).
  void loop_setup(const Loop& L, const std::string& s) {
    em_.line(t_[L.for_tok].line);
    std::string ty = L.type.empty() ? "__typeof__(" + L.var + ")" : L.type;
    em_.raw("  " + ty + " cape_lb" + s + " = (" + L.lb + "), cape_ub" + s + " = (" + L.ub + ");\n");
    em_.raw("  long long cape_st" + s + " = " + L.step + ";\n");
    if (!L.type.empty()) em_.raw("  " + L.type + " " + L.var + " = cape_lb" + s + ";\n");
    em_.raw("  unsigned long long cape_n" + s + " = " + trip_count(L, "cape_lb" + s, "cape_ub" + s, "cape_st" + s) + ";\n");
  }

  void chunk_loop(const Loop& L, const std::string& s, const Ctx& ctx) {
    gen("  /* Fig. 3 line 17: D, on this node's chunks */\n"
        "  for (cape_b" + s + " = cape_sh" + s + ".lo; cape_b" + s + " < cape_sh" + s +
        ".hi; cape_b" + s + " += cape_sh" + s + ".stride)\n"
        "    for (cape_k" + s + " = cape_b" + s + "; cape_k" + s + " < cape_sh" + s + ".hi && cape_k" + s +
        " - cape_b" + s + " < cape_sh" + s + ".chunk; ++cape_k" + s + ") {\n"
        "      " + L.var + " = (__typeof__(" + L.var + "))((unsigned long long)cape_lb" + s + " + cape_k" +
        s + " * (unsigned long long)cape_st" + s + ");\n");
    emit_stmt(L.body, ctx);
    gen("    }\n");
  }

  // ---- data-sharing clauses (002_2c61c2cb27f62a9a.txt Sect. 4.2, Fig. 6-7, Table 2) ----
  static std::string red_op(const std::string& op) {
    static const std::map<std::string, std::string> m = {
        {"+", "CAPE_RED_ADD"},   {"*", "CAPE_RED_MUL"},   {"-", "CAPE_RED_SUB"},
        {"&", "CAPE_RED_BAND"},  {"|", "CAPE_RED_BOR"},   {"^", "CAPE_RED_BXOR"},
        {"&&", "CAPE_RED_LAND"}, {"||", "CAPE_RED_LOR"},  {"min", "CAPE_RED_MIN"},
        {"max", "CAPE_RED_MAX"}};
    return m.at(op);
  }

  // Threadprivate variables visible at token `at` (Fig. 6: their calls precede every start()).
  std::vector<std::string> threadprivates_at(int at) const {
    std::vector<std::string> r;
    for (auto& tp : tps_)
      if (tp.b < at && at < tp.e && std::find(r.begin(), r.end(), tp.var) == r.end()) r.push_back(tp.var);
    return r;
  }

  // Fig. 7: the clause functions of a construct at token `at`, made before cape_start().
  // copyin variables are threadprivate again once the copyin checkpoint has been injected.
  // `with_private` false: the calls made again at a region's barriers, where the private
  // copies hold each thread's own values (the monitor would take those for the originals
  // and put them back at stop(); the barrier code keeps them itself).
  std::string clause_calls(const Clauses& cl, int at, const std::string& ind, bool with_private = true) const {
    std::string r;
    auto set = [&](const char* fn, const std::vector<std::string>& v) {
      for (auto& x : v) r += ind + fn + "((void *)&" + x + ", sizeof(" + x + "));\n";
    };
    set("cape_set_threadprivate", threadprivates_at(at));
    if (cl.default_none) r += ind + "cape_set_default_none();\n";
    set("cape_set_shared", cl.shared);
    if (with_private) {
      set("cape_set_private", cl.priv);
      set("cape_set_firstprivate", cl.firstpriv);
    }
    set("cape_set_lastprivate", cl.lastpriv);
    for (auto& rd : cl.red)
      r += ind + "cape_reduction((void *)&" + rd.var + ", sizeof(" + rd.var + "), " + red_op(rd.op) +
           ", CAPE_CC_TYPE(" + rd.var + "));\n";
    return r;
  }

  // The reduction variables' types, checked by the C compiler at the variable's position in
  // the pragma: the translator sees no declarations, _Generic does.
  void reduction_checks(const Clauses& cl) {
    for (auto& rd : cl.red) {
      const Token& t = t_[rd.tok];
      bool bitwise = rd.op == "&" || rd.op == "|" || rd.op == "^";
      em_.line(t.line);
      em_.raw(std::string(t.col > 1 ? t.col - 1 : 0, ' ') + "_Static_assert(" +
              (bitwise ? "CAPE_CC_IS_INTEGER(" : "CAPE_CC_TYPE(") + rd.var + ") != 0, \"reduction(" +
              rd.op + ": " + rd.var + "): " + rd.var + " must have " +
              (bitwise ? "an integer type (char, short, int, long, long long, signed or unsigned)"
                       : "an arithmetic type (char, short, int, long, long long, signed or "
                         "unsigned, float or double)") +
              "\");\n");
    }
  }

  // copyin (Table 2): the master's threadprivate values reach every node before the region.
  // They are flipped before start() so that putting them back is a change the master's
  // `copyin` checkpoint carries; the slaves inject it.
  std::string copyin_code(const Clauses& cl, const std::string& s) const {
    if (cl.copyin.empty()) return "";
    std::string r = "    /* copyin: the master's threadprivate values, to every node */\n";
    for (auto& x : cl.copyin) r += "    static __thread __typeof__(" + x + ") cape_ci" + s + "_" + x + ";\n";
    r += "    if (cape_master()) {\n";
    for (auto& x : cl.copyin)
      r += "      CAPE_CC_SAVE(cape_ci" + s + "_" + x + ", " + x + "); CAPE_CC_FLIP(" + x +
           ");\n      cape_set_copyin((void *)&" + x + ", sizeof(" + x + "));\n";
    r += "      cape_start();\n";
    for (auto& x : cl.copyin) r += "      CAPE_CC_RESTORE(" + x + ", cape_ci" + s + "_" + x + ");\n";
    r += "      cape_create(\"copyin\");\n"
         "      cape_stop();\n"
         "      cape_broadcast(\"copyin\");\n"
         "    } else {\n"
         "      cape_receive(\"copyin\");\n"
         "      cape_inject(\"copyin\");\n"

         "    }\n";
    return r;
  }

  // Checks that need the construct: copyin of threadprivate variables only, no reduction or
  // lastprivate... of the loop variable where OpenMP forbids it.
  bool check_vars(Construct* c, Clauses& cl, const std::string& loop_var = "") {
    auto tp = threadprivates_at(c->dir.first_tok);
    for (auto& cla : c->dir.clauses) {
      if (cla.name != "copyin" || cla.args.empty()) continue;
      for (int k : cla.args)
        if (t_[k].text != "," && std::find(tp.begin(), tp.end(), t_[k].text) == tp.end()) {
          d_.error_at(k, "'" + t_[k].text + "' in clause 'copyin' is not threadprivate (declare it "
                         "with '#pragma omp threadprivate(" + t_[k].text + ")' first)");
          cl.ok = false;
        }
    }
    // default(none) (OpenMP 4.5 Sect. 2.15.1.1): every variable the construct names must be
    // listed; gcc checks it only with -fopenmp, which cape-cc does not pass on.
    if (cl.default_none && c->stmt) {
      Names listed(cl.priv.begin(), cl.priv.end());
      for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.shared, &cl.copyin})
        listed.insert(l->begin(), l->end());
      for (auto& rd : cl.red) listed.insert(rd.var);
      for (auto& v : threadprivates_at(c->dir.first_tok)) listed.insert(v);
      if (!loop_var.empty()) listed.insert(loop_var);
      int b = c->stmt->all.b, e = c->stmt->all.e;
      for (auto& n : decls().implicitly_shared(c->dir.first_tok, b, e, {})) {
        if (listed.count(n)) continue;
        for (int i = b; i < e; ++i) {
          if (t_.skip_pragma(i, e)) continue;
          if (t_.ident(i) && t_[i].text == n && !t_.punct(i - 1, ".") && !t_.punct(i - 1, "->")) {
            d_.error_at(i, "'" + n + "' is not listed in a data-sharing clause of 'omp " + c->dir.name +
                               "', which has default(none)");
            cl.ok = false;
            break;
          }
        }
      }
    }
    // `for (int i = ...)` declares i for the loop only: nothing outside could see its last value.
    if (!loop_var.empty() && c->stmt && c->stmt->kind == Stmt::For && c->stmt->header.b >= 0 &&
        !t_.punct(c->stmt->header.b + 1, "=") &&
        std::find(cl.lastpriv.begin(), cl.lastpriv.end(), loop_var) != cl.lastpriv.end())
      for (auto& cla : c->dir.clauses)
        if (cla.name == "lastprivate")
          for (int k : cla.args)
            if (t_[k].text == loop_var) {
              d_.error_at(k, "'" + loop_var + "' in clause 'lastprivate' is declared by the loop (it is not visible after it)");
              cl.ok = false;
            }
    if (!loop_var.empty())
      for (auto& rd : cl.red)
        if (rd.var == loop_var) {
          d_.error_at(rd.tok, "the loop variable '" + loop_var + "' may not appear in clause 'reduction'");
          cl.ok = false;
        }
    return cl.ok;
  }

  // private and firstprivate: both get their bytes back before create() (every node holds
  // the master's value when the region starts, so firstprivate needs nothing more).
  static std::vector<std::string> privates_of(const Clauses& cl) {
    std::vector<std::string> v;
    for (auto* l : {&cl.priv, &cl.firstpriv})
      for (auto& x : *l)
        if (std::find(v.begin(), v.end(), x) == v.end() &&
            std::find(cl.lastpriv.begin(), cl.lastpriv.end(), x) == cl.lastpriv.end())
          v.push_back(x);
    return v;
  }

  // lastprivate: the node that ran the sequentially last iteration (or section) keeps its
  // value, which its checkpoint carries; every other node puts the original bytes back, so
  // exactly one node writes the variable and no merge has to choose.
  std::string lastprivate_code(const Clauses& cl, const std::string& s, const std::string& is_last,
                               const std::string& final_var = "") const {
    if (cl.lastpriv.empty()) return "";
    std::string r;
    if (!final_var.empty())
      r = "  if (" + is_last + ") { /* lastprivate: this node ran the last iteration */\n    " +
          final_var + " = (__typeof__(" + final_var + "))((unsigned long long)cape_lb" + s + " + cape_n" +
          s + " * (unsigned long long)cape_st" + s + ");\n  } else {\n";
    else
      r = "  if (!" + is_last + ") { /* lastprivate: only the last iteration's node keeps its value */\n";
    for (auto& x : cl.lastpriv) r += "    CAPE_CC_RESTORE(" + x + ", cape_pv" + s + "_" + x + ");\n";
    return r + "  }\n";
  }

  // Saving privates: into locals before a window, into TLS inside one.
  std::string save_privates(const std::vector<std::string>& v, const std::string& s, bool tls) {
    std::string r;
    for (auto& x : v) {
      r += std::string("  ") + (tls ? "static __thread " : "") + "__typeof__(" + x + ") cape_pv" + s +
           "_" + x + ";\n  CAPE_CC_SAVE(cape_pv" + s + "_" + x + ", " + x + ");\n";
    }
    return r;
  }
  std::string restore_privates(const std::vector<std::string>& v, const std::string& s) {
    std::string r;
    for (auto& x : v)
      r += "  CAPE_CC_RESTORE(" + x + ", cape_pv" + s + "_" + x + ");\n";
    return r;
  }
  static std::vector<std::string> with(std::vector<std::string> v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.insert(v.begin(), x);
    return v;
  }
  static std::vector<std::string> without(std::vector<std::string> v, const std::string& x) {
    v.erase(std::remove(v.begin(), v.end(), x), v.end());
    return v;
  }

  // The exchange that ends a region or a barrier, inline in the user's function (see
  // cape/cc.h): 001_3036025dc34c4021.txt Fig. 3 lines 6-12 (master) and 18-25 (slaves).
  // The master names its own part "after" too, so wait_for merges the slaves' parts into it
  // (Fig. 3's merge of `final` and `after`, done while the parts arrive): a reduction then
  // combines the master's partial result with the slaves' when inject() applies them to the
  // original value, and no `after` of an earlier region is merged again.
  // `last`: "1"/"0" for a region's end, empty for a barrier (never the last).
  static std::string exchange_code(const std::string& last, const std::string& between = "",
                                   const std::string& started = "") {
    bool barrier = last.empty();
    std::string cond = barrier ? "" : "!" + last;
    std::string r =
        "    if (cape_master()) {\n"
        "      cape_create(\"after\");                /* Fig. 3 line 6: the master's part */\n"
        "      cape_stop();                          /* line 7 */\n"
        "      cape_wait_for(\"after\");              /* lines 8, 11: every slave's part merged into it */\n"
        "      cape_inject(\"after\");                /* line 9 */\n";
    if (barrier)
      r += "      cape_broadcast(\"after\");            /* line 12 */\n";
    else
      r += "      if (" + cond + ")                         /* line 10: !last_parallel() */\n"
           "        cape_broadcast(\"after\");          /* line 12 */\n";
    r += "    } else {\n"
         "      cape_create(\"after\");                /* line 18 */\n"
         "      cape_stop();                          /* line 19 */\n"
         "      cape_send(\"after\", 0);               /* line 20 */\n";
    if (barrier)
      r += "      cape_receive(\"after\");              /* line 22 */\n"
           "      cape_inject(\"after\");               /* line 23 */\n";
    else
      r += "      if (" + cond + ") {                       /* line 21 */\n"
           "        cape_receive(\"after\");            /* line 22 */\n"
           "        cape_inject(\"after\");             /* line 23 */\n"
           "      } else {\n"
           "        cape_cc_exit();                     /* line 25 */\n"
           "      }\n";
    r += "    }\n" + between;
    if (barrier) r += "    cape_start();\n" + started;
    return r;
  }

  std::string end_code(Construct* c) {
    std::string l = "cape_last_" + std::to_string(c->id);
    return "  if (cape_cc_distributed()) {\n    const int " + l + " = " + last(c) +
           "; /* last_parallel(), decided when translating (docs/translator.md) */\n" +
           exchange_code(l) + "  }\n  cape_cc_join();\n}\n";
  }

  // TICKPT: variables of static storage are shared (002 Sect. 3.1), and a region's
  // functions may live in other files. So every translated file registers its own file-scope
  // variables (minus threadprivate ones) through a function that libcape_cc calls before
  // every region's start() (cape_cc_share_statics), put on libcape_cc's list before main.
  std::string statics_function() const {
    if (!o_.tickpt) return "";
    int end = t_.size();
    // Threadprivate variables stay out (this runs before the directives are translated).
    Names tp;
    for (auto& c : d_.ast().constructs)
      if (c.dir.name == "threadprivate" && !c.dir.name_toks.empty())
        for (int k = c.dir.name_toks.back() + 1; k < c.dir.end_tok; ++k) tp.insert(t_[k].text);
    std::vector<std::string> vars;
    for (auto& d : decls().all())
      if (d.addressable() && d.scope_end == end && !tp.count(d.name) && std::find(vars.begin(), vars.end(), d.name) == vars.end())
        vars.push_back(d.name);
    if (vars.empty()) return "";
    std::string r = "\n/* cape (TICKPT): this file's variables of static storage are shared (002_2c61c2cb27f62a9a.txt "
                    "Sect. 3.1), registered before every region's cape_start() (docs/translator.md). */\n"
                    "static void cape_cc_statics(void) {\n";
    for (auto& x : vars) r += "  cape_set_shared((void *)&" + x + ", sizeof(" + x + "));\n";
    r += "}\n__attribute__((constructor)) static void cape_cc_statics_init(void) { cape_cc_add_statics(cape_cc_statics); }\n";
    return r;
  }

  // DICKPT: the locals a region shares must live in memory across its runtime calls. A local
  // whose address is never taken may stay in a callee-saved register (gcc -O2 does), where
  // the writes of another node injected into its stack slot never reach it. Passing its
  // address to an empty asm makes it escape, so the compiler stores it before every call
  // and reloads it after. (TICKPT's cape_set_shared(&x, ...) calls take the address too.)
  std::string in_memory(Construct* c, const Clauses& cl, const std::string& loop_var) const {
    if (o_.tickpt || !c->stmt) return "";
    std::vector<std::string> ex = cl.priv;
    for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.copyin}) ex.insert(ex.end(), l->begin(), l->end());
    for (auto& rd : cl.red) ex.push_back(rd.var);
    for (auto& v : threadprivates_at(c->dir.first_tok)) ex.push_back(v);
    if (!loop_var.empty()) ex.push_back(loop_var);
    std::string r;
    for (auto& x : decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false))
      r += "  CAPE_CC_IN_MEMORY(" + x + ");\n";
    return r;
  }

  // The TICKPT registrations of a region: its implicitly shared variables.
  std::string tickpt_shared(Construct* c, const Clauses& cl, const std::string& loop_var,
                            const std::string& ind) const {
    if (!o_.tickpt || !c->stmt) return "";
    std::vector<std::string> ex = cl.priv;
    for (auto* l : {&cl.firstpriv, &cl.lastpriv, &cl.shared, &cl.copyin})
      ex.insert(ex.end(), l->begin(), l->end());
    for (auto& rd : cl.red) ex.push_back(rd.var);
    for (auto& v : threadprivates_at(c->dir.first_tok)) ex.push_back(v);
    if (!loop_var.empty()) ex.push_back(loop_var);
    std::string r = ind + "cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */\n";
    for (auto& x : decls().implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, ex, false))
      r += ind + "cape_set_shared((void *)&" + x + ", sizeof(" + x + ")); /* implicitly shared (TICKPT) */\n";
    return r;
  }

  // A barrier at token `at`: the region's privates get their bytes back and its other
  // locals are cleared before create(); each node takes its own values back afterwards.
  // `after`: code run once the exchange is over; `calls`: clause calls of the window the
  // barrier opens, besides the region's own (Fig. 7: they hold only until cape_stop()).
  std::string barrier_code(const Ctx& ctx, int at, const std::string& after = "",
                           const std::string& calls = "") {
    std::string calls2;
    if (o_.tickpt && !ctx.region)  // orphaned: the caller's registrations ended at stop()
      calls2 += "    cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */\n";
    calls2 += calls;  // after: the monitor keeps the later call on a variable
    std::vector<std::string> locals;
    if (ctx.region_b >= 0)
      for (auto& n : decls().locals_in_scope(ctx.region_b, at))
        if (std::find(ctx.privates.begin(), ctx.privates.end(), n) == ctx.privates.end()) locals.push_back(n);
    // A region's reduction variables: each thread's running partial result must stay its
    // own across the barrier (OpenMP's private copy), and must not be combined twice. Before
    // create() the variable gets the identity back (what start() gave it), so this exchange
    // adds nothing to the result; after the next start() the partial result is put back,
    // and the region's end combines it whole.
    std::string s = "_" + std::to_string(ctx.region), b = "_" + std::to_string(at);
    std::string red_save, red_back;
    for (auto& x : ctx.reductions) {
      red_save += "    CAPE_CC_SAVE(cape_rp" + s + "_" + x + ", " + x + "); CAPE_CC_RESTORE(" + x + ", cape_ri" + s + "_" + x + ");\n";
      red_back += "    CAPE_CC_RESTORE(" + x + ", cape_rp" + s + "_" + x + "); /* this thread's partial result */\n";
    }
    if (ctx.privates.empty() && locals.empty())
      return "  if (cape_cc_distributed()) { /* barrier */\n" + red_save +
             exchange_code("", after + ctx.calls + calls2, red_back) + "  }\n";
    std::string r = "  if (cape_cc_distributed()) { /* barrier: the region's private variables "
                    "stay out of the checkpoint */\n" + red_save;
    std::string back;
    for (auto& x : locals)
      r += "    static __thread __typeof__(" + x + ") cape_lt" + b + "_" + x + ";\n";
    for (auto& x : ctx.privates) {
      r += "    CAPE_CC_SAVE(cape_pt" + s + "_" + x + ", " + x + "); CAPE_CC_RESTORE(" + x + ", cape_pv" + s + "_" + x + ");\n";
      back += "    CAPE_CC_RESTORE(" + x + ", cape_pt" + s + "_" + x + ");\n";
    }
    for (auto& x : locals) {
      r += "    CAPE_CC_SAVE(cape_lt" + b + "_" + x + ", " + x + "); CAPE_CC_CLEAR(" + x + ");\n";
      back += "    CAPE_CC_RESTORE(" + x + ", cape_lt" + b + "_" + x + ");\n";
    }
    return r + exchange_code("", back + after + ctx.calls + calls2, red_back) + "  }\n";
  }

  std::string flags() const { return o_.master_idle ? "CAPE_CC_MASTER_IDLE" : "0"; }
  std::string last(Construct* c) const { return last_.count(c->id) ? "1" : "0"; }

  // ---- constructs ----
  void translate(Construct* c, const Ctx& ctx) {
    const std::string& n = c->dir.name;
    if (n.empty()) {
      if (c->stmt) emit_stmt(c->stmt, ctx);
      return;
    }
    if (n == "parallel for" || n == "parallel for simd") return parallel_for(c, ctx);
    if (n == "parallel sections") return parallel_sections(c, ctx);
    if (n == "parallel") return parallel(c, ctx);
    if (n == "for" || n == "for simd") return ws_for(c, ctx);
    if (n == "sections") return ws_sections(c, ctx);
    if (n == "single" || n == "master") return single(c, ctx);
    if (n == "barrier") {
      read_clauses(d_, t_, c->dir, {});
      if (ctx.in_ws)
        d_.error_at(name_tok(c), "'omp barrier' may not be closely nested in a worksharing construct");
      em_.line(t_[c->dir.first_tok].line);
      em_.raw(barrier_code(ctx, c->all.b));
      return;
    }
    if (n == "threadprivate") return threadprivate(c, ctx);
    if (n == "simd") {
      read_clauses(d_, t_, c->dir, kSimdClauses);
      d_.note_at(name_tok(c), "'omp simd' dropped: the loop runs as written on each node");
      return emit_stmt(c->stmt, ctx);
    }
    if (n == "section") {
      d_.error_at(name_tok(c), "'omp section' outside 'omp sections'");
      return emit_stmt(c->stmt, ctx);
    }
    static const Names known = {"parallel master", "parallel masked", "masked", "scope", "loop",
                                "parallel loop", "workshare", "requires", "metadirective",
                                "allocate", "scan", "depobj", "error", "taskwait", "taskyield",
                                "barrier", "critical", "atomic", "ordered", "flush", "task",
                                "taskloop", "taskloop simd", "taskgroup"};
    bool is_known = known.count(n) || n.rfind("target", 0) == 0 || n.rfind("teams", 0) == 0 ||
                    n.rfind("distribute", 0) == 0 || n.rfind("declare", 0) == 0 ||
                    n.rfind("cancel", 0) == 0 || n.rfind("end declare", 0) == 0;
    if (is_known)
      unsupported(c, unsupported_reason(n));
    else
      d_.error_at(name_tok(c), "unknown OpenMP directive '" + n + "'");
    if (c->stmt) emit_stmt(c->stmt, ctx);
  }

  bool check_not_nested(Construct* c, const Ctx& ctx) {
    if (ctx.region || ctx.in_ws) {
      unsupported(c, "nested parallelism (a region inside a region); each node runs one thread");
      return false;
    }
    return true;
  }

  // 002_2c61c2cb27f62a9a.txt Fig. 6: `#pragma omp threadprivate(list)` becomes
  // cape_set_threadprivate(&v, sizeof(v)) before the start() of every region where the
  // variables are visible (a call holds only until its region's stop()).
  void threadprivate(Construct* c, const Ctx& ctx) {
    int b = c->dir.name_toks.back() + 1, e = c->dir.end_tok;
    std::vector<std::string> vars;
    bool ok = b < e && t_[b].text == "(" && t_[e - 1].text == ")" && e - b >= 3;
    for (int k = b + 1; ok && k < e - 1; ++k) {
      if ((k - b) % 2 == 1) {
        const auto& w = t_[k].text;  // pragma tokens are not lexed as identifiers
        if (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_') vars.push_back(w);
        else ok = false;
      } else if (t_[k].text != ",") {
        ok = false;
      }
    }
    if (!ok || (e - b) % 2 == 0) {
      d_.error_at(b < e ? b : name_tok(c), "expected '(variable, ...)' after 'omp threadprivate'");
      return;
    }
    if (ctx.region || ctx.in_ws) {
      d_.error_at(name_tok(c), "'omp threadprivate' must appear outside parallel regions, where its variables are declared");
      return;
    }
    // Visible to the end of the enclosing block, or of the file.
    int depth = 0, scope_end = t_.size();
    for (int i = c->dir.first_tok - 1; i >= 0; --i) {
      if (t_.punct(i, "}")) ++depth;
      if (t_.punct(i, "{") && depth-- == 0) { scope_end = t_.match(i) > i ? t_.match(i) : scope_end; break; }
    }
    std::string list;
    for (auto& v : vars) {
      tps_.push_back({v, c->dir.first_tok, scope_end});
      list += (list.empty() ? "" : ", ") + v;
    }
    em_.line(t_[c->dir.first_tok].line);
    em_.raw("/* cape: #pragma omp threadprivate(" + list + "): each node keeps its own copy; "
            "cape_set_threadprivate() before every region's cape_start() (002_2c61c2cb27f62a9a.txt Fig. 6) */\n");
  }

  // 001_3036025dc34c4021.txt Fig. 3, generalised from one iteration per slave to chunks;
  // clause functions before each cape_start() (002_2c61c2cb27f62a9a.txt Fig. 7).
  void parallel_for(Construct* c, const Ctx& ctx) {
    Clauses cl = read_clauses(d_, t_, c->dir, unite(kParallelClauses, c->dir.name == "parallel for" ? kForClauses : unite(kForClauses, kSimdClauses), "nowait"));
    if (c->dir.name != "parallel for")
      d_.note_at(name_tok(c), "'simd' dropped from 'omp " + c->dir.name + "'");
    Loop L;
    if (!check_not_nested(c, ctx) || !read_canonical_loop(d_, t_, *c, L) || !check_vars(c, cl, L.var) || !cl.ok)
      return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    bool var_last = std::find(cl.lastpriv.begin(), cl.lastpriv.end(), L.var) != cl.lastpriv.end();
    auto priv = without(privates_of(cl), L.var);
    if (!var_last) {
      if (L.type.empty()) priv = with(priv, L.var);
      else priv.insert(priv.begin(), L.var);
    }
    // The implicit (TICKPT) registrations first: the monitor keeps the later call on a variable.
    std::string calls = tickpt_shared(c, cl, L.var, "      ") + clause_calls(cl, c->dir.first_tok, "      ");
    std::string master_calls = calls;
    if (o_.tickpt || cl.default_none)
      master_calls += "      cape_set_shared(cape_desc, sizeof(cape_desc)); /* the `before` shares */\n";
    if (!cl.lastpriv.empty())  // Def. 4.2: the later share's value wins
      calls += "      cape_set_order((long)cape_cc_order(cape_n" + s_of(c) + ", " + cl.chunk + "));\n";
    if (!cl.lastpriv.empty())
      master_calls += "      cape_set_order((long)cape_cc_order(cape_n" + s_of(c) + ", " + cl.chunk + "));\n";
    // The master's `before` carries its reduction variables at the operator's identity
    // (start() set them): a slave keeps its own value, which is the original one.
    std::string keep_red, back_red;
    for (auto& rd : cl.red) {
      std::string v = "cape_rv" + s_of(c) + "_" + rd.var;
      keep_red += "      static __thread __typeof__(" + rd.var + ") " + v + ";\n      CAPE_CC_SAVE(" + v + ", " + rd.var + ");\n";
      back_red += "      CAPE_CC_RESTORE(" + rd.var + ", " + v + ");\n";
    }
    gen_begin(c, "001_3036025dc34c4021.txt Fig. 3 by chunks");
    reduction_checks(cl);
    gen(in_memory(c, cl, L.var));
    loop_setup(L, s);
    gen(save_privates(priv, s, false));
    gen(save_privates(cl.lastpriv, s, false));
    std::string sh = "cape_sh" + s, sv = "cape_s" + s;
    gen("  static __thread cape_share_t " + sh + ";\n"
        "  static __thread unsigned long long cape_b" + s + ", cape_k" + s + ";\n"
        "  static __thread int " + sv + ";\n"
        "  if (cape_cc_fork(" + cl.num_threads + ", " + cl.cond + ", " + flags() + ")) {\n" +
        copyin_code(cl, s) +
        "    if (cape_master()) {                    /* Fig. 3 line 1 */\n" + master_calls +
        "      cape_start();                         /* line 2 */\n"
        "      for (" + sv + " = 1; " + sv + " < cape_num_nodes(); ++" + sv + ") { /* line 3: a chunk per slave */\n"
        "        cape_cc_share(&cape_desc[" + sv + "], cape_n" + s + ", " + cl.chunk + ", cape_cc_thread_of_node(" + sv + "));\n"
        "        cape_create(\"before\");             /* line 4 */\n"
        "        cape_send(\"before\", " + sv + ");      /* line 5 */\n"
        "      }\n"
        "      " + sv + " = 0;\n"
        "      cape_cc_share(&" + sh + ", cape_n" + s + ", " + cl.chunk + ", cape_cc_thread_of_node(0)); /* the master's own share */\n"
        "    } else {\n" + keep_red +
        "      cape_receive(\"before\");              /* line 14 */\n"
        "      cape_inject(\"before\");               /* line 15 */\n" + back_red + calls +
        "      cape_start();                         /* line 16 */\n"
        "      " + sh + " = cape_desc[cape_node_id()];\n"
        "    }\n"
        "  } else {\n"
        "    cape_cc_share(&" + sh + ", cape_n" + s + ", 0, 0); /* serial: every iteration */\n"
        "  }\n");
    Ctx inner = ctx;
    inner.region = c->id;
    inner.in_ws = true;
    chunk_loop(L, s, inner);
    gen(lastprivate_code(cl, s, "cape_cc_last(&" + sh + ", cape_n" + s + ")", var_last ? L.var : ""));
    gen(restore_privates(priv, s));
    gen("  cape_b" + s + " = cape_k" + s + " = 0;\n"
        "  cape_sh" + s + " = (cape_share_t){0, 0, 0, 0};\n" + end_code(c));
    desc_used_ = true;
  }

  // 003_45ed75503520c8f4.txt Fig. 3, any number of sections, round robin over the team.
  void parallel_sections(Construct* c, const Ctx& ctx) {
    Clauses cl = read_clauses(d_, t_, c->dir, unite(kParallelClauses, kSectionsClauses, "nowait"));
    std::vector<Stmt*> secs;
    if (!check_not_nested(c, ctx) || !sections_of(c, secs) || !check_vars(c, cl) || !cl.ok)
      return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    auto priv = privates_of(cl);
    gen_begin(c, "003_45ed75503520c8f4.txt Fig. 3");
    reduction_checks(cl);
    gen(in_memory(c, cl, ""));
    gen(save_privates(priv, s, false));
    gen(save_privates(cl.lastpriv, s, false));
    gen("  if (cape_cc_fork(" + cl.num_threads + ", " + cl.cond + ", " + flags() + ")) {\n" +
        copyin_code(cl, s) + tickpt_shared(c, cl, "", "    ") + clause_calls(cl, c->dir.first_tok, "    ") +
        (cl.lastpriv.empty() ? "" : "    cape_set_order((long)cape_cc_order_of_section(" + std::to_string(secs.size()) + "));\n") +
        "    cape_start();\n  }\n");
    Ctx inner = ctx;
    inner.region = c->id;
    inner.in_ws = true;
    emit_sections(secs, inner);
    gen(lastprivate_code(cl, s, "cape_cc_mine(" + std::to_string(secs.size() - 1) + ")"));
    gen(restore_privates(priv, s));
    gen(end_code(c));
  }

  void parallel(Construct* c, const Ctx& ctx) {
    Clauses cl = read_clauses(d_, t_, c->dir, kParallelClauses, /*whole_team=*/true);
    if (!check_not_nested(c, ctx) || !check_vars(c, cl) || !cl.ok) return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    auto priv = privates_of(cl);
    std::string shared = tickpt_shared(c, cl, "", "    ");
    std::string calls = shared + clause_calls(cl, c->dir.first_tok, "    ");
    gen_begin(c, "every node runs the region; writes meet at barriers and at its end");
    reduction_checks(cl);
    gen(in_memory(c, cl, ""));
    gen(save_privates(priv, s, false));
    for (auto& x : priv)
      gen("  static __thread __typeof__(" + x + ") cape_pt" + s + "_" + x + " __attribute__((unused)); /* for barriers */\n");
    std::string ids;
    for (auto& rd : cl.red) {
      gen("  static __thread __typeof__(" + rd.var + ") cape_ri" + s + "_" + rd.var + " __attribute__((unused)), cape_rp" +
          s + "_" + rd.var + " __attribute__((unused)); /* the identity, the partial result */\n");
      ids += "    CAPE_CC_SAVE(cape_ri" + s + "_" + rd.var + ", " + rd.var + "); /* start() gave it the identity */\n";
    }
    gen("  if (cape_cc_fork(0, " + cl.cond + ", CAPE_CC_WHOLE_TEAM)) {\n" + copyin_code(cl, s) + calls +
        "    cape_start();\n" + ids + "  }\n");
    Ctx inner;
    inner.region = c->id;
    inner.privates = priv;
    inner.region_b = c->stmt->all.b;
    inner.calls = shared + clause_calls(cl, c->dir.first_tok, "    ", false);
    inner.default_none = cl.default_none;
    for (auto& rd : cl.red) inner.reductions.push_back(rd.var);
    emit_stmt(c->stmt, inner);
    gen(restore_privates(priv, s));
    gen(end_code(c));
  }

  bool check_ws(Construct* c, const Ctx& ctx) {
    if (ctx.in_ws) {
      d_.error_at(name_tok(c), "'omp " + c->dir.name +
                                   "' may not be closely nested in another worksharing construct");
      return false;
    }
    return true;
  }

  // A worksharing construct with a reduction starts a window of its own: the barrier that
  // opens it carries the reduction calls (Fig. 7: calls precede a start()). Every thread of
  // the team meets a worksharing construct, so the added barrier changes no result.
  std::string reduction_window(Construct* c, const Ctx& ctx, const Clauses& cl) {
    if (cl.red.empty()) return "";
    std::string calls;
    for (auto& rd : cl.red)
      calls += "    cape_reduction((void *)&" + rd.var + ", sizeof(" + rd.var + "), " + red_op(rd.op) +
               ", CAPE_CC_TYPE(" + rd.var + "));\n";
    return barrier_code(ctx, c->all.b, "", calls);
  }

  static std::string s_of(Construct* c) {
    std::string s = "_";  // not "_" + to_string(): gcc 12 -O2 gives a false -Wrestrict on that
    s += std::to_string(c->id);
    return s;
  }

  void ws_for(Construct* c, const Ctx& ctx) {
    Clauses cl = read_clauses(d_, t_, c->dir, c->dir.name == "for" ? kForClauses : unite(kForClauses, kSimdClauses));
    if (c->dir.name != "for") d_.note_at(name_tok(c), "'simd' dropped from 'omp for simd'");
    Loop L;
    if (!check_ws(c, ctx) || !read_canonical_loop(d_, t_, *c, L) || !check_vars(c, cl, L.var) || !cl.ok)
      return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    bool var_last = std::find(cl.lastpriv.begin(), cl.lastpriv.end(), L.var) != cl.lastpriv.end();
    auto priv = without(privates_of(cl), L.var);
    if (!var_last) {
      if (L.type.empty()) priv = with(priv, L.var);
      else priv.insert(priv.begin(), L.var);
    }
    gen_begin(c, "this thread's share of the static schedule");
    reduction_checks(cl);
    gen(reduction_window(c, ctx, cl));
    loop_setup(L, s);
    gen(save_privates(priv, s, true));
    gen(save_privates(cl.lastpriv, s, true));
    gen("  static __thread cape_share_t cape_sh" + s + ";\n"
        "  static __thread unsigned long long cape_b" + s + ", cape_k" + s + ";\n"
        "  cape_cc_share(&cape_sh" + s + ", cape_n" + s + ", " + cl.chunk + ", cape_cc_tid());\n");
    Ctx inner = ctx;
    inner.in_ws = true;
    chunk_loop(L, s, inner);
    gen(lastprivate_code(cl, s, "cape_cc_last(&cape_sh" + s + ", cape_n" + s + ")", var_last ? L.var : ""));
    gen(restore_privates(priv, s));
    gen("  cape_b" + s + " = cape_k" + s + " = 0;\n  cape_sh" + s + " = (cape_share_t){0, 0, 0, 0};\n");
    if (!cl.nowait) gen(barrier_code(ctx, c->all.b));
    gen("}\n");
  }

  // The sections of c: its compound statement, split at `#pragma omp section`.
  bool sections_of(Construct* c, std::vector<Stmt*>& secs) {
    Stmt* body = c->stmt;
    if (!body || body->kind != Stmt::Compound) {
      d_.error_at(body ? body->all.b : name_tok(c), "'omp " + c->dir.name + "' must be followed by a compound statement");
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
          d_.error_at(name_tok(sec), "expected '#pragma omp section' in 'omp " + c->dir.name +
                                         "', found 'omp " + sec->dir.name + "'");
          return false;
        }
        if (!sec->dir.clauses.empty()) d_.error_at(sec->dir.clauses[0].tok, "'omp section' takes no clauses");
        secs.push_back(sec->stmt);
        i = sec->all.e;
        ++ci;
        continue;
      }
      if (!secs.empty() || i != (body->items.b < 0 ? i : body->items.b)) {
        d_.error_at(i, "expected '#pragma omp section' before this statement in 'omp " + c->dir.name + "'");
        return false;
      }
      // The first section may omit its directive: it runs to the first `#pragma omp section`.
      Stmt* first = d_.ast().make_stmt();
      first->kind = Stmt::Simple;
      int end = ci < cs.size() ? cs[ci]->all.b : e;
      first->all = Span{i, end, {}};
      secs.push_back(first);
      i = end;
    }
    if (secs.empty()) d_.error_at(body->all.b, "'omp " + c->dir.name + "' has no section");
    return !secs.empty();
  }

  void emit_sections(const std::vector<Stmt*>& secs, const Ctx& ctx) {
    for (size_t j = 0; j < secs.size(); ++j) {
      gen("  if (cape_cc_mine(" + std::to_string(j) + ")) { /* section " + std::to_string(j) + " */\n");
      emit_stmt(secs[j], ctx);
      gen("  }\n");
    }
  }

  void ws_sections(Construct* c, const Ctx& ctx) {
    Clauses cl = read_clauses(d_, t_, c->dir, kSectionsClauses);
    std::vector<Stmt*> secs;
    if (!check_ws(c, ctx) || !sections_of(c, secs) || !check_vars(c, cl) || !cl.ok)
      return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    auto priv = privates_of(cl);
    gen_begin(c, "sections round robin over the team");
    reduction_checks(cl);
    gen(reduction_window(c, ctx, cl));
    gen(save_privates(priv, s, true));
    gen(save_privates(cl.lastpriv, s, true));
    Ctx inner = ctx;
    inner.in_ws = true;
    emit_sections(secs, inner);
    gen(lastprivate_code(cl, s, "cape_cc_mine(" + std::to_string(secs.size() - 1) + ")"));
    gen(restore_privates(priv, s));
    if (!cl.nowait) gen(barrier_code(ctx, c->all.b));
    gen("}\n");
  }

  // single runs on thread 0 (OpenMP lets any one thread run it); master always does.
  // copyprivate: thread 0 copies its values into statics of the construct (static storage:
  // the same address on every node, written by one node only), which the closing barrier
  // carries; every node takes them back after the exchange.
  void single(Construct* c, const Ctx& ctx) {
    bool is_single = c->dir.name == "single";
    Clauses cl = read_clauses(d_, t_, c->dir, is_single ? kSingleClauses : Names{});
    if (is_single && !check_ws(c, ctx)) return emit_stmt(c->stmt, ctx);
    if (!is_single && ctx.in_ws) {
      d_.error_at(name_tok(c), "'omp master' may not be closely nested in a worksharing construct");
      return emit_stmt(c->stmt, ctx);
    }
    if (!cl.copypriv.empty() && cl.nowait) {
      for (auto& x : c->dir.clauses)
        if (x.name == "nowait") d_.error_at(x.tok, "clauses 'copyprivate' and 'nowait' may not be used together");
      cl.ok = false;
    }
    if (!cl.ok) return emit_stmt(c->stmt, ctx);
    std::string s = "_" + std::to_string(c->id);
    auto priv = privates_of(cl);
    gen_begin(c, is_single ? "run by thread 0" : "");
    std::string cp_calls;
    for (auto& x : cl.copypriv) {
      gen("  static __typeof__(" + x + ") cape_cp" + s + "_" + x + "; /* copyprivate */\n");
      cp_calls += "    cape_set_copyprivate((void *)&cape_cp" + s + "_" + x + ", sizeof(cape_cp" + s + "_" + x + "));\n";
    }
    // TICKPT (and default(none)) ship registered data only: the statics are registered
    // before a start() of their own (a barrier before the single, which every thread of
    // the team meets).
    if ((o_.tickpt || ctx.default_none) && !cp_calls.empty()) gen(barrier_code(ctx, c->all.b, "", cp_calls));
    gen(save_privates(priv, s, true));
    gen("  if (cape_cc_tid() == 0) {\n");
    Ctx inner = ctx;
    inner.in_ws = is_single;
    emit_stmt(c->stmt, inner);
    for (auto& x : cl.copypriv) gen("    CAPE_CC_SAVE(cape_cp" + s + "_" + x + ", " + x + ");\n");
    gen("  }\n");
    gen(restore_privates(priv, s));
    std::string after;
    for (auto& x : cl.copypriv) after += "    CAPE_CC_RESTORE(" + x + ", cape_cp" + s + "_" + x + "); /* copyprivate */\n";
    if (is_single && !cl.nowait) gen(barrier_code(ctx, c->all.b, after));
    gen("}\n");
  }

  bool desc_used_ = false;
  bool uses_desc() const {
    for (auto& c : d_.ast().constructs)
      if (c.dir.name == "parallel for" || c.dir.name == "parallel for simd") return true;
    return false;
  }

};

}  // namespace

std::string translate(Driver& drv, const Options& options) {
  return Translator(drv, options).run();
}

}  // namespace cape::tr
