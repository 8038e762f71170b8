// The two-level model, cape-cc --model=mt (000_2e1115959baa0e7d.txt Fig. 5-6;
// docs/translator.md, "The two-level model"): the `parallel for` template of the single
// model around the nodes (001 Fig. 3 by chunks: shares, checkpoints, exchange), and inside a
// node the paper's Fig. 6 lines 20-22: its share runs on real OpenMP threads,
//
//   #pragma omp parallel num_threads(cape_cc_mt_threads()) private(...) firstprivate(...) reduction(...)
//   {
//     cape_cc_mt_enter();                        // team thread number, the node's heap window
//     cape_cc_share(&sh, n, chunk, cape_cc_tid()); // this thread's share of the whole team
//     for (chunks of sh) { var = ...; D }
//     if (lastprivate and iteration n-1 is ours) *original = private copy;
//     cape_cc_mt_leave();
//   }
//
// Fig. 6 splits the node's iterations again with `#pragma omp parallel for`; here every thread
// takes its share of the global team (nodes x threads) directly, which is the same split for
// schedule(static) and the right one for schedule(static, chunk), and omp_get_thread_num()
// answers its number in that team. Constructs the model does not have yet are refused.
#include <algorithm>

#include "canonical_loop.h"
#include "clauses.h"
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {

bool mt_supported(TranslationContext& cx, Construct* c) {
  static const Names ok = {"parallel for", "parallel for simd", "parallel loop", "parallel sections", "parallel",
                           "simd", "flush", "master", "barrier", "threadprivate", "critical", "atomic", ""};
  // Inside a region the node's threads share its variables: a worksharing construct's own
  // data-sharing clauses would need each thread's copy (not done yet).
  // (for and sections: each thread gets its own copies, mt_ws_open; single not yet.)
  static const Names ws = {"for", "for simd", "loop", "sections", "single"};
  static const Names ws_clauses = {"private", "firstprivate", "lastprivate", "reduction", "copyprivate"};
  const std::string& n = c->dir.name;
  if (ws.count(n)) {
    for (const Clause& cl : c->dir.clauses)
      if (ws_clauses.count(cl.name) && n == "single" && (cl.name == "lastprivate" || cl.name == "reduction")) {
        cx.d.error_at(cl.tok, "clause '" + cl.name + "' on 'omp " + n + "' is not supported with --model=mt yet "
                              "(the node's threads would share the variable); put it on the 'parallel' "
                              "construct, or use --model=single");
        return false;
      }
    return true;
  }
  if (ok.count(n)) return true;
  if (n == "ordered") return true;  // the node's threads poll for their turn (ordered.cpp)
  cx.d.error_at(name_tok(c->dir), "'omp " + n + "' is not supported with --model=mt yet (the two-level model "
                                  "translates 'parallel', 'parallel for', 'parallel sections' and, inside "
                                  "regions, 'for', 'sections', 'single', 'master', 'barrier'); use --model=single");
  return false;
}

// A worksharing loop's variables are private (OpenMP), but the single model runs the loop
// on the variable itself when it is declared outside, and puts its value back after; the
// node's threads would share it. Under the two-level model the generated block declares its
// own (`__typeof__(i) i = lb;`, the outer one keeps its value): lastprivate, which would
// need the outer one, is refused on inner constructs (mt_supported).
void mt_own_loop_vars(Loop& L) {
  if (L.type.empty()) L.type = "__typeof__(" + L.var + ")";
  for (Loop& in : L.nest)
    if (in.type.empty()) in.type = "__typeof__(" + in.var + ")";
}

// Inside a region, a worksharing construct's private, firstprivate, lastprivate and
// reduction variables get each thread's own copy: the generated block declares one under
// the variable's name (C allows it: the new name's scope begins after its declarator),
// after a pointer to the original. Reduction copies start at the operator's identity (+ - ^:
// 0, *: 1) or, for the idempotent operators (& | && || min max), at the original's value;
// each thread folds its copy into the original under a critical section before the
// construct's barrier, whose exchange carries the node's partial result (the single model's
// start() gave the original the identity). lastprivate: the thread with the last iteration
// (or section) writes the original.
std::string mt_ws_open(TranslationContext& cx, const Clauses& cl, int id, const std::string& loop_var) {
  std::string out;
  auto decl = [&](const std::string& x, const std::string& how) {
    std::string p = gen_name("wo", id, x);
    out += "  __typeof__(" + x + ") *" + p + " = &" + x + ";\n";
    if (how == "pointer only") return;  // the loop variable: the loop's block declares its own
    if (how == "copy")
      out += "  __typeof__(" + x + ") " + x + "; __builtin_memcpy(&" + x + ", " + p + ", sizeof " + x + ");\n";
    else
      out += "  __typeof__(" + x + ") " + x + how + ";\n";
  };
  for (const std::string& x : cl.priv)
    if (x != loop_var) decl(x, "");
  for (const std::string& x : cl.firstpriv) decl(x, "copy");
  for (const std::string& x : cl.lastpriv)
    if (x == loop_var) decl(x, "pointer only");
    else if (std::find(cl.firstpriv.begin(), cl.firstpriv.end(), x) == cl.firstpriv.end()) decl(x, "");
  for (const Reduction& rd : cl.red) {
    if (rd.section || rd.elem != rd.var) {
      cx.d.error_at(rd.tok, "a reduction over an array on a worksharing construct inside a region is not "
                            "supported with --model=mt yet; put it on the 'parallel' construct, or use --model=single");
      continue;
    }
    std::string init = rd.op == "+" || rd.op == "-" || rd.op == "^" ? " = 0" : rd.op == "*" ? " = 1" : "";
    if (init.empty()) decl(rd.var, "copy");
    else decl(rd.var, init);
  }
  return out;
}

std::string mt_ws_close(const Clauses& cl, int id, const std::string& is_last) {
  std::string out, copy;
  for (const std::string& x : cl.lastpriv) copy += "    *" + gen_name("wo", id, x) + " = " + x + ";\n";
  if (!copy.empty()) out += "  if (" + is_last + ") { /* lastprivate: this thread ran the last one */\n" + copy + "  }\n";
  if (!cl.red.empty()) {
    out += "#pragma omp critical (cape_reduction)\n  { /* this thread's part of the reductions */\n";
    for (const Reduction& rd : cl.red) {
      std::string o = "*" + gen_name("wo", id, rd.var), x = rd.var;
      if (rd.op == "+" || rd.op == "-") out += "    " + o + " += " + x + ";\n";
      else if (rd.op == "max") out += "    if (" + x + " > " + o + ") " + o + " = " + x + ";\n";
      else if (rd.op == "min") out += "    if (" + x + " < " + o + ") " + o + " = " + x + ";\n";
      else if (rd.op == "&&" || rd.op == "||") out += "    " + o + " = " + o + " " + rd.op + " " + x + ";\n";
      else out += "    " + o + " " + rd.op + "= " + x + ";\n";
    }
    out += "  }\n";
  }
  return out;
}

// copyin under the two-level model: threadprivate variables live in each thread's TLS, which
// never travels, so the master's values go through a static copy of each (tracked memory,
// the same on every node after the exchange; the flip makes the master's create() see a
// change); every node then takes them into its thread 0's copy, and libgomp's copyin clause
// (mt_open) gives them to the node's other threads.
namespace {
// `tmpl` once per variable: $x the variable, $cs its static copy.
std::string per_var(const std::vector<std::string>& vars, int id, const std::string& tmpl) {
  std::string r;
  for (auto& x : vars) r += Holes{{"x", x}, {"cs", gen_name("cs", id, x)}}.fill(tmpl);
  return r;
}
}  // namespace

std::string mt_copyin_code(const Clauses& cl, int id) {
  if (cl.copyin.empty()) return "";
  Holes h{{"declare", per_var(cl.copyin, id, "    static __typeof__($x) $cs;\n")},
          {"flip", per_var(cl.copyin, id,
                           "      CAPE_CC_SAVE($cs, $x); CAPE_CC_FLIP($cs);\n"
                        "      cape_set_copyin((void *)&$cs, sizeof($cs));\n")},
          {"set", per_var(cl.copyin, id, "      CAPE_CC_SAVE($cs, $x);\n")},
          {"take", per_var(cl.copyin, id, "    CAPE_CC_RESTORE($x, $cs);\n")}};
  return h.fill(R"c(    /* copyin: the master's threadprivate values, to every node, through static copies */
$declare
    if (cape_master()) {
$flip
      cape_start();
$set
      cape_create("copyin");
      cape_stop();
      cape_broadcast("copyin");
    } else {
      cape_receive("copyin");
      cape_inject("copyin");
    }
$take
)c");
}

// Around a region's exchange: the node's threads meet, one makes the exchange, they meet again.
std::string mt_barrier(const std::string& exchange) {
  return "#pragma omp barrier\n  if (cape_cc_mt_exchanger()) {\n" + exchange + "  }\n#pragma omp barrier\n";
}

std::string mt_lastprivate_pointers(const Clauses& cl, int id, const std::string& loop_var) {
  std::string out;
  for (const std::string& x : cl.lastpriv)
    if (x != loop_var) out += "  __typeof__(" + x + ") *" + gen_name("lp", id, x) + " = &" + x + ";\n";
  return out;
}

namespace {

std::string list_clause(const char* name, const std::vector<std::string>& v) {
  if (v.empty()) return "";
  std::string s = std::string(" ") + name + "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + ")";
}

}  // namespace

// The node's team: `#pragma omp parallel` with the construct's data sharing, and the
// thread's entry (its team number, the heap window).
std::string mt_open(const Clauses& cl, const std::vector<std::string>& priv, const std::string& loop_var) {
  // private: the loop variables and private(list); firstprivate keeps its clause (the
  // single model's priv holds both); lastprivate variables are copied in too (a thread
  // without iterations copies nothing out, but gcc cannot know that and warns), and out below.
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<std::string> p, fp = cl.firstpriv;
  for (const std::string& x : priv)
    if (!has(fp, x)) p.push_back(x);
  for (const std::string& x : cl.lastpriv)
    if (x == loop_var && !has(p, x)) p.push_back(x);
    else if (x != loop_var && !has(fp, x)) fp.push_back(x);
  std::string clauses = list_clause("private", p) + list_clause("firstprivate", fp) + list_clause("copyin", cl.copyin);
  for (const Reduction& rd : cl.red)
    clauses += " reduction(" + rd.op + ":" + rd.var + (rd.section ? "[" + rd.lo + ":" + rd.len + "]" : "") + ")";
  return "  /* 000_2e1115959baa0e7d.txt Fig. 6 lines 20-22: this node's share on its OpenMP threads */\n"
         "#pragma omp parallel num_threads(cape_cc_mt_threads())" + clauses + "\n  {\n  cape_cc_mt_enter();\n";
}

// lastprivate: the thread that ran the last iteration or section (`is_last`) copies its
// values out; then the thread leaves.
std::string mt_close(const Clauses& cl, int id, const std::string& loop_var, const std::string& is_last) {
  std::string copy;
  for (const std::string& x : cl.lastpriv)
    if (x != loop_var) copy += "    *" + gen_name("lp", id, x) + " = " + x + ";\n";
  std::string out;
  if (!copy.empty()) out = "  if (" + is_last + ") { /* lastprivate: this thread ran the last one */\n" + copy + "  }\n";
  return out + "  cape_cc_mt_leave();\n  }\n";
}

void mt_chunk_loop(TranslationContext& cx, const Loop& L, const Holes& h, const Enclosing& enc, const Clauses& cl,
                   const std::vector<std::string>& priv, int id) {
  cx.gen(mt_open(cl, priv, L.var) + h.fill("  cape_cc_share(&$sh, $n, $chunk, cape_cc_tid());\n"));
  chunk_loop(cx, L, h, enc);
  cx.gen(mt_close(cl, id, L.var, h.fill("cape_cc_last(&$sh, $n)")));
}

}  // namespace cape::tr
