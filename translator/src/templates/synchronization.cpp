// Synchronisation that has a correct meaning under CAPE (issue 12):
//  - `flush`: between barriers each node works on its own copy of memory, and a race-free
//    program reads nothing another thread writes before the next barrier, where CAPE makes
//    memory consistent (001_3036025dc34c4021.txt Fig. 3's exchange); so flush is a no-op.
//    Busy-waiting on a flag another thread sets (the one use of flush a race-free program
//    cannot do without) cannot work between nodes, and a -v note says so.
//  - `critical` and `atomic` where one thread runs alone (the body of `master` or `single`,
//    a section): there is nothing to exclude, so the statement runs as written.
//  - OpenMP 5's `loop`: bound to a parallel region it is `for` (templates/ws_for.cpp);
//    bind(thread) makes every thread run every iteration, the loop as written.
#include "clauses.h"
#include "templates/templates.h"

namespace cape::tr {

void flush(TranslationContext& cx, Construct* c, const Enclosing&) {
  cx.line_at(c->dir.first_tok);
  cx.em.raw("/* cape: #pragma omp " + cx.t.text(c->dir.first_tok + 1, c->dir.end_tok) +
            ": memory is made consistent at every barrier and at the end of a region */\n");
  cx.d.note_at(name_tok(c->dir),
               "'omp flush' is a no-op under CAPE: a race-free program needs memory consistent only at "
               "barriers, where the nodes exchange their writes; a flag one node sets is never seen by "
               "another before the next barrier, so busy-waiting on it (flush in a loop) never ends");
}

void exclusive(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  const std::string& n = c->dir.name;
  static const Names atomic = {"read", "write", "update", "capture", "compare", "fail", "weak", "seq_cst",
                               "acq_rel", "release", "acquire", "relaxed", "hint"};
  for (auto& cl : c->dir.clauses)
    if (n == "critical" ? cl.name != "hint" : !atomic.count(cl.name))
      cx.d.error_at(cl.tok, "clause '" + cl.name + "' is not valid on 'omp " + n + "'");
  if (!enc.alone) {
    cx.unsupported(c, "mutual exclusion needs shared memory; nodes exchange their writes only at barriers "
                      "and at the end of a region (inside 'master', 'single' or a section, where one thread "
                      "runs alone, it is accepted)");
    return cx.emit_stmt(c->stmt, enc);
  }
  cx.gen_begin(c, "one thread runs here alone: nothing to exclude");
  cx.emit_stmt(c->stmt, enc);
  cx.gen("}\n");
}

void loop(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  for (auto& cl : c->dir.clauses)
    if (cl.name == "bind" && cx.t.text(cl.args) == "thread") {
      Clauses r = read_clauses(cx.d, cx.t, c->dir, kLoopClauses);
      if (!r.ok) return cx.emit_stmt(c->stmt, enc);
      if (!r.priv.empty() || !r.lastpriv.empty() || !r.red.empty()) {
        cx.d.error_at(cl.tok, "'omp loop bind(thread)' with data-sharing clauses is not supported yet");
        return cx.emit_stmt(c->stmt, enc);
      }
      cx.gen_begin(c, "bind(thread): this thread runs every iteration");
      cx.emit_stmt(c->stmt, enc);
      cx.gen("}\n");
      return;
    }
  ws_for(cx, c, enc);
}

}  // namespace cape::tr
