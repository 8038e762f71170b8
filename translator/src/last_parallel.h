// last_parallel() of 001_3036025dc34c4021.txt Fig. 3 (lines 10, 21), decided statically per
// file (docs/translator.md): after the program's last region the master does not
// broadcast and the slaves exit.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ast.h"
#include "tokens.h"

namespace cape::tr {

// The file-scope function definitions: name -> the braces of its body.
struct FunctionBody {
  int b = -1, e = -1;
};
std::map<std::string, FunctionBody> function_bodies(const Tokens& t);

// The ids of the constructs that are the program's last parallel region: at most one, and
// none when that cannot be shown. A region is the last when it is the last parallel
// construct in main, not inside a loop, main has no goto, the file does not call
// atexit/on_exit, and nothing after it in main calls a function that can reach a parallel
// region: only library functions that never call back into the program, and functions of
// this file that, transitively, call nothing else and contain no parallel construct.
std::set<int> last_parallel(const Tokens& t, const Ast& ast);

}  // namespace cape::tr
