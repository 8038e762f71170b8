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
  static const Names ok = {"parallel for", "parallel for simd", "parallel loop", "parallel sections", "simd", "flush", ""};
  const std::string& n = c->dir.name;
  if (ok.count(n)) return true;
  cx.d.error_at(name_tok(c->dir), "'omp " + n + "' is not supported with --model=mt yet (the two-level model "
                                  "translates 'parallel for' and 'parallel sections' only); use --model=single");
  return false;
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
  std::string clauses = list_clause("private", p) + list_clause("firstprivate", fp);
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
