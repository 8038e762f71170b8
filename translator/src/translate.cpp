// The translation of one unit: the header, the user's tokens copied under `#line`
// directives, each OpenMP construct replaced by its template (templates/templates.h), and
// under TICKPT the function registering the file's static variables.
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

#include <map>
#include <string_view>

#include "clauses.h"
#include "context.h"
#include "directive.h"
#include "last_parallel.h"
#include "templates/cape1.h"
#include "templates/data_sharing.h"
#include "templates/templates.h"

namespace cape::tr {
namespace {

using Template = void (*)(TranslationContext&, Construct*, const Enclosing&);

const std::map<std::string, Template, std::less<>> kTemplates = {
    {"parallel for", parallel_for},
    {"parallel for simd", parallel_for},
    {"parallel sections", parallel_sections},
    {"parallel", parallel_region},
    {"for", ws_for},
    {"for simd", ws_for},
    {"sections", ws_sections},
    {"single", single},
    {"master", single},
    {"barrier", barrier},
    {"flush", flush},
    {"critical", critical},
    {"atomic", atomic},
    {"ordered", ordered},
    {"loop", loop},
    {"parallel loop", parallel_for},
    {"threadprivate", threadprivate},
};

// Directives of OpenMP that CAPE does not translate (the others are unknown).
bool is_known(const std::string& n) {
  static const Names known = {"parallel master", "parallel masked", "masked", "scope", "loop",
                              "parallel loop", "workshare", "requires", "metadirective",
                              "allocate", "scan", "depobj", "error", "taskwait", "taskyield",
                              "barrier", "critical", "atomic", "ordered", "flush", "task",
                              "taskloop", "taskloop simd", "taskgroup"};
  return known.count(n) || n.rfind("target", 0) == 0 || n.rfind("teams", 0) == 0 ||
         n.rfind("distribute", 0) == 0 || n.rfind("declare", 0) == 0 || n.rfind("cancel", 0) == 0 ||
         n.rfind("end declare", 0) == 0;
}

std::string unsupported_reason(const std::string& name) {
  auto starts = [&](std::string_view p) { return name.rfind(p, 0) == 0; };
  if (starts("task"))
    return "tasks need a shared task pool; CAPE distributes only loops and sections (write the work as a "
           "'for' over its items or as 'sections')";
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

// The file has a parallel for, whose `before` checkpoints carry the shares in cape_desc.
bool uses_desc(const Ast& ast) {
  for (auto& c : ast.constructs)
    if (c.dir.name == "parallel for" || c.dir.name == "parallel for simd" || c.dir.name == "parallel loop") return true;
  return false;
}

}  // namespace

void translate_construct(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  const std::string& n = c->dir.name;
  if (n.empty()) {
    if (c->stmt) cx.emit_stmt(c->stmt, enc);
    return;
  }
  if (cx.opt.cape1) {  // 003 Fig. 2 (templates/cape1.h); regions by the default templates
    if (n == "parallel for" || n == "parallel for simd" || n == "parallel loop") return cape1_parallel_for(cx, c, enc);
    if (n == "parallel sections") return cape1_parallel_sections(cx, c, enc);
    if (kTemplates.count(n) && !cape1_by_default_template(n)) {
      cape1_unsupported(cx, c);
      if (c->stmt) cx.emit_stmt(c->stmt, enc);
      return;
    }
  }
  // (A construct no model translates gets the general message below, not "use --model=single".)
  if (cx.opt.mt && kTemplates.count(n) && !mt_supported(cx, c)) {
    if (c->stmt) cx.emit_stmt(c->stmt, enc);
    return;
  }
  if (auto it = kTemplates.find(n); it != kTemplates.end()) return it->second(cx, c, enc);
  if (n == "simd") {
    read_clauses(cx.d, cx.t, c->dir, kSimdClauses);
    cx.d.note_at(name_tok(c->dir), "'omp simd' dropped: the loop runs as written on each node");
    return cx.emit_stmt(c->stmt, enc);
  }
  if (n == "section") {
    cx.d.error_at(name_tok(c->dir), "'omp section' outside 'omp sections'");
    return cx.emit_stmt(c->stmt, enc);
  }
  if (is_known(n))
    cx.unsupported(c, unsupported_reason(n));
  else
    cx.d.error_at(name_tok(c->dir), "unknown OpenMP directive '" + n + "'");
  if (c->stmt) cx.emit_stmt(c->stmt, enc);
}

std::string translate(Driver& drv, const Options& options) {
  TranslationContext cx(drv, options);
  Ast& ast = drv.ast();
  cx.last = last_parallel(cx.t, ast);
  bool any = !ast.constructs.empty();
  // The model, told at the start of main when the file has a directive (or under TICKPT).
  auto fns = function_bodies(cx.t);
  if (auto m = fns.find("main"); m != fns.end() && (any || options.tickpt)) cx.main_body = m->second.b;
  std::string statics = statics_function(cx);
  static_locals(cx);
  if (!any && (cx.main_body >= 0 || !statics.empty() || !cx.after_tok.empty())) {
    // No directive, but main (where the program tells its monitor the model) or static
    // variables, file-scope or block-scope (shared under TICKPT): only under --ckpt=tickpt.
    cx.em.raw("/* cape-translate --ckpt=tickpt: the model and this file's static variables. */\n"
              "#include <cape/cc.h>\n");
  } else if (any) {
    cx.em.raw("/* Translated by cape-translate from " + drv.filename() +
              ": OpenMP directives became CAPE runtime calls (docs/translator.md). */\n"
              "#include <cape/cc.h>\n");
    if (options.cape1)  // before main: omp_get_max_threads() counts the parts
      cx.em.raw("#include <cape/cape1_cc.h>\n"
                "__attribute__((constructor)) static void cape1_cc_file(void) { cape1_cc_init(); }\n");
    if (uses_desc(ast) && !options.cape1)
      cx.em.raw("/* The `before` checkpoints of 001_3036025dc34c4021.txt Fig. 3 carry these. */\n"
                "static cape_share_t cape_desc[CAPE_CC_MAX_NODES] __attribute__((unused));\n");
    if (options.mt)  // before main, the same on every node: omp_get_max_threads() knows the team
      cx.em.raw("/* cape-cc --model=mt: threads per node, before main (docs/translator.md). */\n"
                "__attribute__((constructor)) static void cape_cc_mt_file(void) { cape_cc_mt_init(); }\n");
  }
  // CAPE-1 has no lock service, as for critical (cape1_unsupported): the lock API stopped at
  // run time ("lock ... entered outside a parallel region's window", no line) before.
  if (options.cape1) {
    static const Names locks = {"omp_set_lock", "omp_test_lock", "omp_set_nest_lock", "omp_test_nest_lock"};
    for (int i = 0; i < cx.t.size(); ++i)
      if (cx.t.ident(i) && !cx.t[i].system && locks.count(cx.t[i].text) && cx.t.punct(i + 1, "("))
        drv.error_at(i, "'" + cx.t[i].text + "' is not supported by --model=cape1: mutual exclusion would need a lock "
                        "service between the parts' processes (docs/cape1.md); use the default model");
  }
  cx.em.line(drv.filename(), 1);
  if (!ast.unit.empty()) cx.emit_range(ast.unit.b, ast.unit.e, ast.unit.cs, Enclosing{}, true, /*exact=*/true);
  // Trailing trivia after the last token lives on the End token.
  if (cx.t.size() > 0 && cx.t[cx.t.size() - 1].kind == TokKind::End) cx.em.raw(cx.t[cx.t.size() - 1].trivia);
  if (!statics.empty()) {
    cx.em.newline();
    cx.em.raw(statics);
  }
  return std::move(cx.em.str());
}

}  // namespace cape::tr
