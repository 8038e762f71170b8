// `cape-cc --model=cape1`: 003_45ed75503520c8f4.txt Fig. 2 (complete checkpoints) for
// `parallel for` and `parallel sections`; every other construct and clause is refused
// (docs/cape1.md). The generated code calls include/cape/cape1_cc.h.
#pragma once

#include "context.h"

namespace cape::tr {

void cape1_parallel_for(TranslationContext& cx, Construct* c, const Enclosing& enc);
void cape1_parallel_sections(TranslationContext& cx, Construct* c, const Enclosing& enc);
// The message for a construct --model=cape1 does not translate.
void cape1_unsupported(TranslationContext& cx, Construct* c);

}  // namespace cape::tr
