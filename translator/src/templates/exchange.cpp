#include "templates/exchange.h"

#include <algorithm>

#include "code.h"
#include "directive.h"
#include "templates/data_sharing.h"

namespace cape::tr {
namespace {

// Fig. 3 lines 6-12 and 18-25. The master names its own part "after" too, so wait_for
// merges the slaves' parts into it (Fig. 3's merge of `final` and `after`, done while the
// parts arrive): a reduction then combines the master's partial result with the slaves'
// when inject() applies them to the original value, and no `after` of an earlier region is
// merged again. $between: code run on every node once the exchange is over.
constexpr std::string_view kRegionEnd = R"c(    if (cape_master()) {
      cape_create("after");                /* Fig. 3 line 6: the master's part */
      cape_stop();                          /* line 7 */
      cape_wait_for("after");              /* lines 8, 11: every slave's part merged into it */
      cape_inject("after");                /* line 9 */
      if (!$last)                         /* line 10: !last_parallel() */
        cape_broadcast("after");          /* line 12 */
    } else {
      cape_create("after");                /* line 18 */
      cape_stop();                          /* line 19 */
      cape_send("after", 0);               /* line 20 */
      if (!$last) {                       /* line 21 */
        cape_receive("after");            /* line 22 */
        cape_inject("after");             /* line 23 */
      } else {
        cape_cc_exit();                     /* line 25 */
      }
    }
$between
)c";

// A barrier is never the last: the same exchange, then tracking starts again ($started:
// code run once it has).
constexpr std::string_view kBarrier = R"c(    if (cape_master()) {
      cape_create("after");                /* Fig. 3 line 6: the master's part */
      cape_stop();                          /* line 7 */
      cape_wait_for("after");              /* lines 8, 11: every slave's part merged into it */
      cape_inject("after");                /* line 9 */
      cape_broadcast("after");            /* line 12 */
    } else {
      cape_create("after");                /* line 18 */
      cape_stop();                          /* line 19 */
      cape_send("after", 0);               /* line 20 */
      cape_receive("after");              /* line 22 */
      cape_inject("after");               /* line 23 */
    }
$between
    cape_start();
$started)c";

}  // namespace

std::string end_code(const TranslationContext& cx, Construct* c) {
  Holes h{{"last", gen_name("last", c->id)}, {"value", cx.last_of(c)}, {"between", ""}};
  h.set("exchange", h.fill(kRegionEnd));
  return h.fill(R"c(  if (cape_cc_distributed()) {
    const int $last = $value; /* last_parallel(), decided when translating (docs/translator.md) */
$exchange
  }
  cape_cc_join();
}
)c");
}

std::string barrier_code(const TranslationContext& cx, const Enclosing& enc, int at, const std::string& after,
                         const std::string& calls, const std::vector<std::string>& unshare) {
  std::string region_calls = enc.calls;
  for (auto& x : unshare) {
    std::string line = "cape_set_shared((void *)&" + x + ", sizeof(__typeof__(" + x + ")));";
    std::string kept;
    for (size_t pos = 0; pos < region_calls.size();) {
      size_t eol = region_calls.find('\n', pos);
      eol = eol == std::string::npos ? region_calls.size() : eol + 1;
      if (region_calls.substr(pos, eol - pos).find(line) == std::string::npos)
        kept += region_calls.substr(pos, eol - pos);
      pos = eol;
    }
    region_calls = kept;
  }
  std::string calls2;
  if (cx.opt.tickpt && !enc.region)  // orphaned: the caller's registrations ended at stop()
    calls2 += "    cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */\n";
  calls2 += calls;  // after: the monitor keeps the later call on a variable
  std::vector<std::string> locals;
  if (enc.region_b >= 0)
    for (auto& n : cx.decls().locals_in_scope(enc.region_b, at))
      if (std::find(enc.privates.begin(), enc.privates.end(), n) == enc.privates.end()) locals.push_back(n);
  // A region's reduction variables: each thread's running partial result must stay its own
  // across the barrier (OpenMP's private copy), and must not be combined twice. Before
  // create() the variable gets the identity back (what start() gave it), so this exchange
  // adds nothing to the result; after the next start() the partial result is put back, and
  // the region's end combines it whole.
  std::string red_save, red_back, keep, back;
  auto names = [&](const std::string& x) {
    return Holes{{"x", x}, {"rp", gen_name("rp", enc.region, x)}, {"ri", gen_name("ri", enc.region, x)},
                 {"pt", gen_name("pt", enc.region, x)}, {"pv", gen_name("pv", enc.region, x)},
                 {"lt", gen_name("lt", at, x)}};
  };
  for (auto& rd : enc.reductions) {
    Holes r = names(rd.var);
    red_save += "    " + save_reduction(rd, r.fill("$rp")) + " " + restore_reduction(rd, r.fill("$ri")) + "\n";
    red_back += "    " + restore_reduction(rd, r.fill("$rp")) + " /* this thread's partial result */\n";
  }
  // The region's privates get their bytes back, its locals are cleared (equal bytes on
  // every node are no conflict); each node takes its own values back after the exchange.
  for (auto& x : locals) keep += names(x).fill("    static __thread __typeof__($x) $lt;\n");
  for (auto& x : enc.privates) {
    keep += names(x).fill("    CAPE_CC_SAVE($pt, $x); CAPE_CC_RESTORE($x, $pv);\n");
    back += names(x).fill("    CAPE_CC_RESTORE($x, $pt);\n");
  }
  for (auto& x : locals) {
    keep += names(x).fill("    CAPE_CC_SAVE($lt, $x); CAPE_CC_CLEAR($x);\n");
    back += names(x).fill("    CAPE_CC_RESTORE($x, $lt);\n");
  }
  Holes h{{"between", back + after + region_calls + calls2}, {"started", red_back}};
  h.set("why", keep.empty() ? "" : ": the region's private variables stay out of the checkpoint");
  h.set("red_save", red_save).set("keep", keep).set("exchange", h.fill(kBarrier));
  return h.fill(R"c(  if (cape_cc_distributed()) { /* barrier$why */
$red_save
$keep
$exchange  }
)c");
}

// Every thread of the team meets a worksharing construct, so the added barrier changes no result.
std::string reduction_window(const TranslationContext& cx, Construct* c, const Enclosing& enc, const Clauses& cl) {
  if (cl.red.empty()) return "";
  std::vector<std::string> unshare;
  for (auto& rd : cl.red)
    if (rd.section && cx.opt.tickpt) unshare.push_back(rd.var);
  return barrier_code(cx, enc, c->all.b, "", reduction_calls(cl, "    ", cx.opt.tickpt), unshare);
}

void barrier(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  read_clauses(cx.d, cx.t, c->dir, {});
  if (enc.in_ws) cx.d.error_at(name_tok(c->dir), "'omp barrier' may not be closely nested in a worksharing construct");
  cx.line_at(c->dir.first_tok);
  cx.em.raw(barrier_code(cx, enc, c->all.b));
}

}  // namespace cape::tr
