// Data sharing (002_2c61c2cb27f62a9a.txt Sect. 3-4, Fig. 6-7, Tables 1-2): the clause
// functions made before a construct's cape_start(), the bytes of private variables put back
// before every create(), lastprivate, copyin, reductions' type checks, and the variables a
// region shares implicitly (registered under TICKPT, kept in memory under DICKPT).
#pragma once

#include <string>
#include <vector>

#include "clauses.h"
#include "context.h"

namespace cape::tr {

// Threadprivate variables visible at token `at` (Fig. 6: their calls precede every start()).
std::vector<std::string> threadprivates_at(const TranslationContext& cx, int at);

// Fig. 7: the clause functions of a construct at token `at`, made before cape_start(), each
// line indented by `ind`. `with_private` false: the calls made again at a region's barriers,
// where the private copies hold each thread's own values (the monitor would take those for
// the originals and put them back at stop(); the barrier code keeps them itself).
std::string clause_calls(const TranslationContext& cx, const Clauses& cl, int at, const std::string& ind,
                         bool with_private = true);
// cape_reduction(&v, sizeof v, CAPE_RED_op, CAPE_CC_TYPE(v)) for each reduction variable.
// TICKPT (`tickpt`), or for the arrays in `rest_shared` (a region's `shared` clause names
// them): an array section's reduction also registers the rest of its array shared.
std::string reduction_calls(const Clauses& cl, const std::string& ind, bool tickpt,
                            const std::vector<std::string>& rest_shared = {});

// The bytes each reduction covers and its element (Reduction::addr, size, elem): a whole
// variable, every element of an array (its dimensions from its declaration), or a section
// `a[lo:len]` of an array. Called by check_vars.
void resolve_reductions(TranslationContext& cx, Clauses& cl, int at);
// Statements saving the bytes a reduction covers into `save` (a static __thread of the
// variable's type), and putting them back.
std::string save_reduction(const Reduction& rd, const std::string& save);
std::string restore_reduction(const Reduction& rd, const std::string& save);

// The reduction variables' types, checked by the C compiler at the variable's position in
// the pragma: the translator sees no declarations, _Generic does.
void reduction_checks(TranslationContext& cx, const Clauses& cl);

// Checks that need the construct: copyin of threadprivate variables only, default(none)'s
// listing, no lastprivate or reduction of the loop variable where OpenMP forbids it.
// Returns cl.ok.
bool check_vars(TranslationContext& cx, Construct* c, Clauses& cl, const std::string& loop_var = "");

// copyin (Table 2): the master's threadprivate values reach every node before the region.
std::string copyin_code(const Clauses& cl, int id);

// private and firstprivate variables (not lastprivate): their bytes are put back.
std::vector<std::string> privates_of(const Clauses& cl);
// v with x first (unless there), v without x.
std::vector<std::string> with(std::vector<std::string> v, const std::string& x);
std::vector<std::string> without(std::vector<std::string> v, const std::string& x);
// Saving privates into cape_pv_<id>_<x>: into locals before a window, into TLS inside one.
std::string save_privates(const std::vector<std::string>& v, int id, bool tls);
std::string restore_privates(const std::vector<std::string>& v, int id);

// lastprivate: only the node where `is_last` holds keeps its values. `final_var`: the loop
// variable in lastprivate, given its value after the last iteration (lb + n * step).
std::string lastprivate_code(const Clauses& cl, int id, const std::string& is_last,
                             const std::string& final_var = "");

// DICKPT: CAPE_CC_IN_MEMORY for the locals a region shares (see data_sharing.cpp).
// The automatic locals (and parameters) visible at the region, declared outside it, whose
// address is taken in their scope (`&x`) or that are arrays: the region may write them
// through a pointer without naming them (`long *pc = &count;` then `*pc += v`). OpenMP
// shares them, so TICKPT registers them and critical sections carry them. Added to `vars`
// unless excluded (the region's clauses) or there already.
void add_reachable_by_pointer(const TranslationContext& cx, Construct* c, const std::vector<std::string>& exclude,
                              std::vector<std::string>& vars);
std::string in_memory(const TranslationContext& cx, Construct* c, const Clauses& cl, const std::string& loop_var);
// TICKPT: the registrations of a region's implicitly shared variables.
std::string tickpt_shared(const TranslationContext& cx, Construct* c, const Clauses& cl,
                          const std::string& loop_var, const std::string& ind);
// TICKPT: the function registering this file's variables of static storage ("" if none).
std::string statics_function(const TranslationContext& cx);
// TICKPT: CAPE_CC_STATIC_LOCAL (cc.h) after each block-scope static variable's declaration
// outside constructs (cx.after_tok).
void static_locals(TranslationContext& cx);

}  // namespace cape::tr
