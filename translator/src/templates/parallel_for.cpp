// `parallel for`: 001_3036025dc34c4021.txt Fig. 3, generalised from one iteration per slave
// to chunks of schedule(static[, chunk]); clause functions before each cape_start()
// (002_2c61c2cb27f62a9a.txt Fig. 7). docs/translator.md, "parallel for".
//
// The master runs the loop header: for each slave cape_cc_deal writes the slave's share into
// cape_desc[slave], and the master creates and sends `before` (lines 2-5); then cape_cc_deal
// clears cape_desc (its `after` carries that to every node: memory outside the region stays
// the same everywhere, which the determinism check relies on); slaves receive and inject it
// (lines 14-16). Every node runs its chunks (line 17), puts its privates back, and the
// exchange ends the region (lines 6-12, 18-25: exchange.cpp). cape_create() stays here, in
// the user's function (docs/translator.md, rule 1); libcape_cc does the rest.
#include <algorithm>

#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {
namespace {

constexpr std::string_view kFork = R"c(  static __thread cape_share_t $sh;
  static __thread unsigned long long $b, $k;
  if (cape_cc_fork($num_threads, $cond, $flags, $where)) {
$copyin
    if (cape_master()) {                    /* Fig. 3 line 1 */
$master_calls
      cape_start();                         /* line 2 */
      while (cape_cc_deal(cape_desc, &$sh, $n, $chunk)) { /* line 3: a share per slave, then the master's */
        cape_create("before");             /* line 4 */
        cape_cc_send_share();               /* line 5 */
      }
    } else {
$keep_red
      cape_cc_receive_share($then_start);             /* lines 14-15 */
$back_red
$calls
      cape_start();                         /* line 16 */
      cape_cc_my_share(&$sh, cape_desc);
    }
  } else {
    cape_cc_share(&$sh, $n, 0, 0); /* serial: every iteration */
  }
)c";

// The nodes deal themselves their shares (issue 14): the shares are a function of the trip
// count, the chunk and the team, which every node computes alike (the trip count and chunk
// join the determinism check: cape_cc_fork_loop). No `before` is made, sent, received or
// injected: the master's cape_create("before") and sends, a slave's receive and inject, and a
// stop on every node go (Fig. 3 lines 3-5 and 14-15 have nothing left to carry).
constexpr std::string_view kForkOwn = R"c(  static __thread cape_share_t $sh;
  static __thread unsigned long long $b, $k;
  if (cape_cc_fork_loop($num_threads, $cond, $flags, $where, $n, $chunk)) {
$copyin
$calls
    cape_start_own_share();                 /* Fig. 3 lines 2, 16 */
    cape_cc_own_share(&$sh, $n, $chunk);    /* line 3: this node's share, dealt here */
  } else {
    cape_cc_share(&$sh, $n, 0, 0); /* serial: every iteration */
  }
)c";

}  // namespace

void parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  bool simd = c->dir.name == "parallel for simd", loop = c->dir.name == "parallel loop";
  Clauses cl = read_clauses(
      cx.d, cx.t, c->dir,
      unite(kParallelClauses, loop ? kLoopClauses : simd ? unite(kForClauses, kSimdClauses) : kForClauses, "nowait"));
  if (simd) cx.d.note_at(name_tok(c->dir), "'simd' dropped from 'omp " + c->dir.name + "'");
  atomic_reductions(cx, c, cl);  // atomics that can be reductions (atomic.cpp)
  Loop L;
  if (!check_not_nested(cx, c, enc) || !read_canonical_loop(cx.d, cx.t, *c, L, cl.collapse) || !check_vars(cx, c, cl, L.var) ||
      !cl.ok)
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  bool var_last = std::find(cl.lastpriv.begin(), cl.lastpriv.end(), L.var) != cl.lastpriv.end();
  auto priv = without(privates_of(cl), L.var);
  if (!var_last) {
    if (L.type.empty()) priv = with(priv, L.var);
    else priv.insert(priv.begin(), L.var);
  }
  if (!nest_privates(cx, c, L, cl, priv)) return cx.emit_stmt(c->stmt, enc);
  Holes h = loop_holes(id);
  h.set("chunk", cl.chunk).set("num_threads", cl.num_threads).set("cond", cl.cond).set("flags", cx.fork_flags(cl.copyin.empty())).set("where", cx.where(c));
  // The implicit (TICKPT) registrations first: the monitor keeps the later call on a variable.
  std::string calls = tickpt_shared(cx, c, cl, L.var, "      ") + clause_calls(cx, cl, c->dir.first_tok, "      ");
  // The `before` shares travel (the master's writes) and their clearing too (every node's
  // inject of the master's `after` must take it, or the nodes' cape_desc would differ).
  // Every node deals its own share, except in the paper's exact shape (--master-idle), the
  // models with their own dealing (mt: the node's threads; cape1: its parts), and with copyin:
  // the master's copyin window puts its region number one ahead, and a slave takes the
  // master's number from the `before` it injects (inject.cpp; 002 Def. 4.2: without it the
  // master's words would win over the slaves' in the merge).
  const bool own = !cx.opt.mt && !cx.opt.cape1 && !cx.opt.master_idle && cl.copyin.empty();
  if (!own && (cx.opt.tickpt || cl.default_none))
    calls += "      cape_set_shared(cape_desc, sizeof(cape_desc)); /* the `before` shares */\n";
  calls += lock_shared(cx, c, cl, L.var, "      ");
  std::string master_calls = calls;
  if (!cl.lastpriv.empty()) {  // Def. 4.2: the later share's value wins
    std::string order = h.fill("      cape_set_order((long)cape_cc_order($n, $chunk));\n");
    calls += order;
    master_calls += order;
  }
  // The master's `before` carries its reduction variables at the operator's identity
  // (start() set them): a slave keeps its own value, which is the original one.
  std::string keep_red, back_red;
  for (auto& rd : cl.red) {
    Holes r{{"x", rd.var}, {"rv", gen_name("rv", id, rd.var)}};
    keep_red += r.fill("      static __thread __typeof__($x) $rv;\n      ") + save_reduction(rd, r.fill("$rv")) + "\n";
    back_red += "      " + restore_reduction(rd, r.fill("$rv")) + "\n";
  }
  h.set("copyin", (cx.opt.mt ? mt_copyin_code(cl, id) : copyin_code(cl, id))).set("master_calls", master_calls).set("calls", calls);
  h.set("keep_red", keep_red).set("back_red", back_red);
  // Nothing that reads or writes memory between the slave's inject and its cape_start(): the
  // inject rides on start()'s trap (issue 14: one trap fewer per region on each slave). The
  // clause calls in between ride there too (libcape defers them since session 11) and read
  // only stack values and addresses, which `before` never carries.
  h.set("then_start", back_red.empty() ? "1" : "0");

  cx.gen_begin(c, "001_3036025dc34c4021.txt Fig. 3 by chunks");
  reduction_checks(cx, cl);
  cx.gen(in_memory(cx, c, cl, L.var));
  loop_setup(cx, L, h);
  cx.gen(save_privates(priv, id, false));
  cx.gen(save_privates(cl.lastpriv, id, false));
  if (cx.opt.mt) cx.gen(mt_lastprivate_pointers(cl, id, L.var));
  if (own) {
    std::string indented;  // (the calls, one level less deep than in kFork)
    for (size_t p = 0, e; p < calls.size(); p = e + 1) {
      e = calls.find('\n', p);
      if (e == std::string::npos) e = calls.size();
      std::string line = calls.substr(p, e - p);
      indented += (line.starts_with("  ") ? line.substr(2) : line) + "\n";
    }
    h.set("calls", calls.empty() ? "" : indented);
  }
  cx.gen(h.fill(own ? kForkOwn : kFork));
  Enclosing inner = enc;
  inner.region = id;
  inner.in_ws = true;
  if (cx.opt.mt) mt_chunk_loop(cx, L, h, inner, cl, priv, id);
  else chunk_loop(cx, L, h, inner);
  cx.gen(lastprivate_code(cl, id, h.fill(cx.opt.mt ? "cape_cc_mt_last($n, $chunk)" : "cape_cc_last(&$sh, $n)"),
                          var_last ? L.var : ""));
  cx.gen(restore_privates(priv, id));
  cx.gen(h.fill("  $b = $k = 0;\n  $sh = (cape_share_t){0, 0, 0, 0};\n") + end_code(cx, c));
}

}  // namespace cape::tr
