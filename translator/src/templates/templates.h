// One template per construct, each in its own file beside the figure it follows:
//
//   parallel_for.cpp       `parallel for`: 001_3036025dc34c4021.txt Fig. 3, by chunks
//   parallel_sections.cpp  `parallel sections`: 003_45ed75503520c8f4.txt Fig. 3
//   parallel_region.cpp    `parallel`: every node runs the region
//   ws_for.cpp             `for` inside a region (or orphaned)
//   ws_sections.cpp        `sections` inside a region (or orphaned)
//   single.cpp             `single` and `master`
//   threadprivate.cpp      `threadprivate`: 002_2c61c2cb27f62a9a.txt Fig. 6
//   exchange.cpp           the end of a region and `barrier`: 001 Fig. 3 lines 6-25
//   synchronization.cpp    `flush`, `critical`/`atomic` run alone, OpenMP 5's `loop`
//   mt_parallel_for.cpp    cape-cc --model=mt (000_2e1115959baa0e7d.txt Fig. 6): the node's team
//                          of OpenMP threads, its barriers, each thread's own copies, copyin
//
// with their shared pieces in data_sharing.h (clauses, 002 Fig. 6-7, Table 2), exchange.h
// and shares.h (loop chunks, sections). Every template reads the construct's clauses, checks
// them, and on an error copies the statement unchanged (the errors fail the compile).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "clauses.h"
#include "context.h"
#include "directive.h"

namespace cape::tr {

void parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc);
void parallel_sections(TranslationContext& cx, Construct* c, const Enclosing& enc);
void parallel_region(TranslationContext& cx, Construct* c, const Enclosing& enc);
void ws_for(TranslationContext& cx, Construct* c, const Enclosing& enc);
void ws_sections(TranslationContext& cx, Construct* c, const Enclosing& enc);
void single(TranslationContext& cx, Construct* c, const Enclosing& enc);
void threadprivate(TranslationContext& cx, Construct* c, const Enclosing& enc);
void barrier(TranslationContext& cx, Construct* c, const Enclosing& enc);
// synchronization.cpp: flush (a no-op), critical and atomic where one thread runs alone, loop.
void flush(TranslationContext& cx, Construct* c, const Enclosing& enc);
void exclusive(TranslationContext& cx, Construct* c, const Enclosing& enc);
void loop(TranslationContext& cx, Construct* c, const Enclosing& enc);

// mt_parallel_for.cpp: the two-level model (cape-cc --model=mt, 000 Fig. 6). mt_supported
// reports (file:line:col) a construct the model does not translate yet; mt_chunk_loop runs
// the node's share on its libgomp threads; mt_lastprivate_pointers: the originals' addresses,
// taken before the window, for the thread that runs the last iteration.
bool mt_supported(TranslationContext& cx, Construct* c);
std::string mt_barrier(const std::string& exchange);
std::string mt_copyin_code(const Clauses& cl, int id);
struct Loop;
struct Clauses;
class Holes;
void mt_own_loop_vars(Loop& L);
std::string mt_ws_open(TranslationContext& cx, const Clauses& cl, int id, const std::string& loop_var);
std::string mt_ws_close(const Clauses& cl, int id, const std::string& is_last);
void mt_chunk_loop(TranslationContext& cx, const Loop& L, const Holes& h, const Enclosing& enc, const Clauses& cl,
                   const std::vector<std::string>& priv, int id);
std::string mt_lastprivate_pointers(const Clauses& cl, int id, const std::string& loop_var);
std::string mt_open(const Clauses& cl, const std::vector<std::string>& priv, const std::string& loop_var);
std::string mt_close(const Clauses& cl, int id, const std::string& loop_var, const std::string& is_last);

// A parallel construct inside a region or a worksharing construct: each node runs one
// thread, so nested parallelism is refused.
inline bool check_not_nested(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  if (enc.region || enc.in_ws) {
    cx.unsupported(c, "nested parallelism (a region inside a region); each node runs one thread");
    return false;
  }
  return true;
}

// Worksharing constructs do not nest closely (OpenMP 4.5 Sect. 2.17).
inline bool check_ws(TranslationContext& cx, Construct* c, const Enclosing& enc) {
  if (enc.in_ws) {
    cx.d.error_at(name_tok(c->dir), "'omp " + c->dir.name + "' may not be closely nested in another worksharing construct");
    return false;
  }
  return true;
}

// Across nodes, through the master's lock service (docs/critical.md; issue 18). exclusive()
// above (critical/atomic where one thread runs alone) is no longer in the table: another
// thread may hold the same critical meanwhile.
void critical(TranslationContext& cx, Construct* c, const Enclosing& enc);  // critical.cpp
// Every object statement tokens [b, e) can write, when they are assignments the translator
// can read (docs/critical.md, "Bodies with known writes"): "{(void *)ADDR, SIZE}" items for
// cape_critical_enter_writes, evaluated before the body. None when it cannot tell.
std::optional<std::vector<std::string>> known_writes(const Tokens& t, int b, int e);
// The file has a critical, atomic or ordered construct or calls omp_set_lock or its kin:
// each region registers the enclosing function's locals it shares (lock_shared: calls of
// cape_critical_shared before its cape_start), which a lock holder may write, here or in a
// function of this file it calls through a pointer (critical.cpp).
bool uses_exclusion(const TranslationContext& cx);
std::string lock_shared(const TranslationContext& cx, Construct* c, const Clauses& cl, const std::string& loop_var,
                        const std::string& ind);
void atomic(TranslationContext& cx, Construct* c, const Enclosing& enc);  // atomic.cpp
void ordered(TranslationContext& cx, Construct* c, const Enclosing& enc);  // ordered.cpp
// A region's atomics that can be its reductions: added to cl.red (before check_vars), and
// their ids to cx.atomic_reductions (atomic.cpp).
void atomic_reductions(TranslationContext& cx, Construct* region, Clauses& cl);

}  // namespace cape::tr
