// A thread's share of the work: the chunks of a canonical loop (001_3036025dc34c4021.txt
// Fig. 3 line 17, generalised from one iteration per slave to schedule(static[, chunk])),
// and the sections of a `sections` construct, round robin over the team.
#pragma once

#include <string>
#include <vector>

#include "canonical_loop.h"
#include "code.h"
#include "context.h"

namespace cape::tr {

// The names of loop construct `id`'s generated code: $lb $ub $st (bounds and step, once
// evaluated), $n (trip count), $sh (this thread's share), $b $k (the chunk loop's
// counters), $s (the master's slave counter).
Holes loop_holes(int id);

// Loop variables and bounds, evaluated once (OpenMP leaves the number of evaluations open),
// before the window, in the loop variable's type.
void loop_setup(TranslationContext& cx, const Loop& L, const Holes& h);
// The holes of loop `level` (2..n) of a collapse(n) nest: $lb_2, $ub_2, $st_2, $n_2...
Holes nest_holes(const Holes& h, size_t level);
// collapse(n): the inner loops' variables are private too (OpenMP 4.5 Sect. 2.15.1.1);
// they join `priv` as the outer one does. False (reported) for lastprivate of one of them.
bool nest_privates(TranslationContext& cx, Construct* c, const Loop& L, const Clauses& cl, std::vector<std::string>& priv);

// The loop over this thread's chunks of $sh, running the user's body.
void chunk_loop(TranslationContext& cx, const Loop& L, const Holes& h, const Enclosing& enc);

// The sections of c: its compound statement, split at `#pragma omp section` (the first may
// omit its directive). Reports a malformed body and returns false.
bool sections_of(TranslationContext& cx, Construct* c, std::vector<Stmt*>& secs);

// Section j runs on the thread cape_cc_mine(j) says.
void emit_sections(TranslationContext& cx, const std::vector<Stmt*>& secs, const Enclosing& enc);

}  // namespace cape::tr
