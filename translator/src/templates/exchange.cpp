#include "templates/exchange.h"

#include <algorithm>

#include "code.h"
#include "directive.h"
#include "templates/data_sharing.h"
#include "templates/templates.h"

namespace cape::tr {
namespace {

// Fig. 3 lines 6-12 and 18-25. The master names its own part "after" too, so wait_for
// merges the slaves' parts into it (Fig. 3's merge of `final` and `after`, done while the
// parts arrive): a reduction then combines the master's partial result with the slaves'
// when inject() applies them to the original value, and no `after` of an earlier region is
// merged again. Only cape_create() is generated here, in the user's function (rule 1 of
// docs/translator.md); cape_cc_end and cape_cc_barrier (libcape_cc) make the rest of the
// exchange, which captures nothing of the stack.
// The create rides on the exchange's first trap (cape_defer_next; issue 14): libcape_cc's
// exchange follows at once and writes nothing of the program's before its first call.
constexpr std::string_view kCreate =
    "    { cape_defer_next(); cape_create(\"after\"); } /* Fig. 3 lines 6, 18: this node's part */\n";

}  // namespace

std::string end_code(const TranslationContext& cx, Construct* c) {
  Holes h{{"last", cx.last_of(c)}};
  // The master's threadprivate values travel in its part (libcape_cc: a slave's sequential
  // part then goes on with them, its own copies kept aside).
  std::string create(kCreate);
  create.replace(create.find("cape_defer_next();"), 0, "cape_cc_tp_out(); ");
  return h.fill(R"c(  if (cape_cc_distributed())
)c") + create +
         h.fill(R"c(  cape_cc_end($last); /* lines 7-12, 19-25; $last = last_parallel(), decided when translating */
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
  if (cx.opt.mt && enc.region) {
    // Inside the node's team a region's reduction variable names the exchanging thread's
    // private copy: its original is registered again from the region's record.
    std::string kept;
    bool any = false;
    for (size_t pos = 0; pos < region_calls.size();) {
      size_t eol = region_calls.find('\n', pos);
      eol = eol == std::string::npos ? region_calls.size() : eol + 1;
      std::string line = region_calls.substr(pos, eol - pos);
      if (line.find("cape_reduction(") == std::string::npos) kept += line;
      else any = true;
      pos = eol;
    }
    region_calls = kept + (any ? "    cape_cc_mt_reductions_again(); /* the region's reductions' originals */\n" : "");
  }
  std::string calls2;
  if (cx.opt.tickpt && !enc.region)  // orphaned: the caller's registrations ended at stop()
    calls2 += "    cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */\n";
  if (!cx.opt.mt && !enc.region)
    calls2 += "    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */\n";
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
  // A variably modified local (`double s[n]`) can have no static copy: libcape_cc keeps its
  // bytes in the thread's untracked buffer (cape_cc_keep_bytes, taken back in the same order).
  auto vla = [&](const std::string& x) { return cx.decls().vla_local(x, enc.region_b, at) != nullptr; };
  for (auto& x : locals)
    if (!vla(x)) keep += names(x).fill("    static __thread __typeof__($x) $lt;\n");
  for (auto& x : enc.privates) {
    keep += names(x).fill("    CAPE_CC_SAVE($pt, $x); CAPE_CC_RESTORE($x, $pv);\n");
    back += names(x).fill("    CAPE_CC_RESTORE($x, $pt);\n");
  }
  for (auto& x : locals) {
    if (vla(x)) {
      keep += names(x).fill("    cape_cc_keep_bytes((void *)&$x, sizeof($x)); /* variably modified */\n");
      back += names(x).fill("    cape_cc_back_bytes((void *)&$x, sizeof($x));\n");
      continue;
    }
    keep += names(x).fill("    CAPE_CC_SAVE($lt, $x); CAPE_CC_CLEAR($x);\n");
    back += names(x).fill("    CAPE_CC_RESTORE($x, $lt);\n");
  }
  // Orphaned: the calling region's privates, which only libcape_cc knows (else a node would
  // ship its private values, and stop() would put those registered at the region's start()
  // back to their values from before the region: NPB CG's iteration counter).
  if (!enc.region) {
    keep += "    cape_cc_orphan_keep(); /* the calling region's private variables */\n";
    back += "    cape_cc_orphan_back();\n";
  }
  Holes h{{"between", back + after + region_calls + calls2}, {"started", red_back}};
  h.set("why", keep.empty() ? "" : ": the region's private variables stay out of the checkpoint");
  h.set("red_save", red_save).set("keep", keep).set("create", std::string(kCreate));
  if (cx.opt.mt)  // the two-level model: the node's threads meet, thread 0 exchanges
    return mt_barrier(h.fill(R"c(  if (cape_cc_distributed()) { /* barrier$why */
$red_save
$keep
$create    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
$between
    cape_start();
$started  }
)c"));
  return h.fill(R"c(  if (cape_cc_distributed()) { /* barrier$why */
$red_save
$keep
$create    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
$between
    cape_start();
$started  }
)c");
}

// Every thread of the team meets a worksharing construct, so the added barrier changes no result.
std::string reduction_window(const TranslationContext& cx, Construct* c, const Enclosing& enc, const Clauses& cl) {
  if (cl.red.empty()) return "";
  // A section's array that the region registers whole (TICKPT's implicit sharing, or a
  // `shared(x)` clause under either model) is left out of this window's region calls and
  // its rest registered around the section: the monitor refuses overlapping registrations
  // (under DICKPT `shared(cnt)` + `for reduction(+: cnt[2:16])` stopped the job).
  std::vector<std::string> unshare;
  for (auto& rd : cl.red) {
    std::string whole = "cape_set_shared((void *)&" + rd.var + ", sizeof(__typeof__(" + rd.var + ")));";
    if (rd.section && (cx.opt.tickpt || enc.calls.find(whole) != std::string::npos) &&
        std::find(unshare.begin(), unshare.end(), rd.var) == unshare.end())
      unshare.push_back(rd.var);
  }
  return barrier_code(cx, enc, c->all.b, "", reduction_calls(cl, "    ", cx.opt.tickpt, unshare), unshare);
}

void barrier(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  read_clauses(cx.d, cx.t, c->dir, {});
  if (enc.in_ws) cx.d.error_at(name_tok(c->dir), "'omp barrier' may not be closely nested in a worksharing construct");
  cx.line_at(c->dir.first_tok);
  cx.em.raw(barrier_code(cx, enc, c->all.b));
}

}  // namespace cape::tr
