// Reading a `#pragma omp` line into a Directive: the directive name (one or more words)
// and its clauses, `name` or `name(args)`, separated by blanks or commas (002 Fig. 4).
#pragma once

#include "ast.h"

namespace cape::tr {

class Driver;

// first: the PragmaStart token; end: the PragmaEnd token. Reports malformed clauses.
Directive parse_directive(Driver& drv, int first, int end);

}  // namespace cape::tr

namespace cape::tr {

// The token a diagnostic about the directive points at: its name's first word.
inline int name_tok(const Directive& d) { return d.name_toks.empty() ? d.first_tok : d.name_toks.front(); }

}  // namespace cape::tr
