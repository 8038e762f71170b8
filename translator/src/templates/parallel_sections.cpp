// `parallel sections`: 003_45ed75503520c8f4.txt Fig. 3, any number of sections, section j
// on thread j % T. Every node starts tracking, runs its sections, and the exchange of
// exchange.cpp ends the region (003's master sends `delta1` to its one slave; with several
// slaves it merges and broadcasts, as 001 Fig. 3 does). docs/translator.md.
#include "code.h"
#include "templates/data_sharing.h"
#include "templates/exchange.h"
#include "templates/shares.h"
#include "templates/templates.h"

namespace cape::tr {

void parallel_sections(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  Clauses cl = read_clauses(cx.d, cx.t, c->dir, unite(kParallelClauses, kSectionsClauses, "nowait"));
  atomic_reductions(cx, c, cl);  // atomics that can be reductions (atomic.cpp)
  std::vector<Stmt*> secs;
  if (!check_not_nested(cx, c, enc) || !sections_of(cx, c, secs) || !check_vars(cx, c, cl) || !cl.ok)
    return cx.emit_stmt(c->stmt, enc);
  const int id = c->id;
  auto priv = privates_of(cl);
  Holes h{{"num_threads", cl.num_threads},
          {"cond", cl.cond},
          {"flags", cx.fork_flags(cl.copyin.empty())},
          {"where", cx.where(c)},
          {"copyin", (cx.opt.mt ? mt_copyin_code(cl, id) : copyin_code(cl, id))},
          {"calls", tickpt_shared(cx, c, cl, "", "    ") + clause_calls(cx, cl, c->dir.first_tok, "    ") +
                        lock_shared(cx, c, cl, "", "    ")},
          {"sections", std::to_string(secs.size())},
          {"last", std::to_string(secs.size() - 1)}};
  // lastprivate: Def. 4.2, the node of the last section writes last.
  h.set("order", cl.lastpriv.empty() ? "" : h.fill("    cape_set_order((long)cape_cc_order_of_section($sections));\n"));

  cx.gen_begin(c, "003_45ed75503520c8f4.txt Fig. 3");
  reduction_checks(cx, cl);
  cx.gen(in_memory(cx, c, cl, ""));
  cx.gen(save_privates(priv, id, false));
  cx.gen(save_privates(cl.lastpriv, id, false));
  if (cx.opt.mt) cx.gen(mt_lastprivate_pointers(cl, id, ""));
  cx.gen(h.fill(R"c(  if (cape_cc_fork($num_threads, $cond, $flags, $where)) {
$copyin
$calls
$order
    cape_start();
  }
)c"));
  Enclosing inner = enc;
  inner.region = id;
  inner.in_ws = true;
  if (cx.opt.mt) cx.gen(mt_open(cl, priv, ""));  // 000 Fig. 6: the node's sections on its threads
  emit_sections(cx, secs, inner);
  if (cx.opt.mt) cx.gen(mt_close(cl, id, "", h.fill("cape_cc_mine($last)")));
  cx.gen(lastprivate_code(cl, id, h.fill(cx.opt.mt ? "cape_cc_mt_mine($last)" : "cape_cc_mine($last)")));
  cx.gen(restore_privates(priv, id));
  cx.gen(end_code(cx, c));
}

}  // namespace cape::tr
