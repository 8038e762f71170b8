// `cape-cc --model=cape1`: 003_45ed75503520c8f4.txt Fig. 2 (complete checkpoints) for
// `parallel for` and `parallel sections`; every other construct and clause is refused
// (docs/cape1.md). The generated code calls include/cape/cape1_cc.h.
#pragma once

#include "clauses.h"
#include "context.h"

namespace cape::tr {

void cape1_parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc);
void cape1_parallel_sections(TranslationContext& cx, Construct* c, const Enclosing& enc);
// The message for a construct --model=cape1 does not translate.
void cape1_unsupported(TranslationContext& cx, Construct* c);
// `parallel` and what runs inside regions: the default model's templates, whose runtime
// calls cape1_cc.h maps to CAPE-1's (docs/cape1.md, "Regions").
bool cape1_by_default_template(const std::string& name);
// copyin: every part was restarted with the master's values; they are only kept from the
// part's own threadprivate copies.
std::string cape1_copyin_code(const Clauses& cl);

}  // namespace cape::tr
