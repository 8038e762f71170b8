#include "last_parallel.h"

#include <vector>

namespace cape::tr {
namespace {

// Library functions that never call back into the program, so cannot reach a parallel region.
const Names kSafeCalls = {
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "puts", "fputs",
    "putchar", "fputc", "putc", "fflush", "fwrite", "fread", "fopen", "fclose", "fgets",
    "fgetc", "getc", "getchar", "scanf", "fscanf", "sscanf", "perror", "strerror", "malloc",
    "calloc", "realloc", "free", "memcpy", "memmove", "memset", "memcmp", "strlen", "strcpy",
    "strncpy", "strcat", "strncat", "strcmp", "strncmp", "strchr", "strrchr", "strstr",
    "strdup", "atoi", "atol", "atof", "strtol", "strtoul", "strtod", "strtoll", "strtoull",
    "abs", "labs", "llabs", "fabs", "fabsf", "sqrt", "sqrtf", "pow", "powf", "exp", "expf",
    "log", "logf", "log2", "log10", "sin", "cos", "tan", "sinf", "cosf", "atan", "atan2",
    "floor", "ceil", "round", "fmod", "fmin", "fmax", "exit", "_exit", "abort", "assert",
    "clock", "clock_gettime", "time", "gettimeofday", "rand", "srand", "getenv", "isnan",
    "isinf", "omp_get_wtime", "omp_get_wtick", "omp_get_thread_num", "omp_get_num_threads",
    "omp_get_max_threads", "omp_get_num_procs", "omp_in_parallel", "omp_set_num_threads"};

// Identifiers followed by '(' that are not calls.
const Names kNotCalls = {"sizeof", "return", "_Alignof", "alignof", "__typeof__", "typeof",
                         "__typeof", "__attribute__", "__attribute", "_Generic", "asm",
                         "__asm__", "__asm", "defined", "_Static_assert", "__extension__",
                         "__builtin_offsetof", "offsetof", "case", "__alignof__", "_Atomic"};

bool is_region(const Construct& c) { return c.dir.name.rfind("parallel", 0) == 0; }

// The functions called in [b, e); `unknown` set by a call through a pointer.
std::vector<std::string> calls_in(const Tokens& t, int b, int e, bool& unknown) {
  std::vector<std::string> r;
  for (int i = b; i < e; ++i) {
    if (t.skip_pragma(i, e)) continue;
    // `(*fp)(x)` or `f(x)(y)` call through a pointer; `(double)(x)` is a cast.
    if (t.punct(i, "(") && t.punct(i - 1, ")") && t.match(i - 1) >= 0 &&
        (t.punct(t.match(i - 1) + 1, "*") || t.ident(t.match(i - 1) - 1)))
      unknown = true;
    if (t.punct(i, "(") && t.ident(i - 1) && !kNotCalls.count(t[i - 1].text)) r.push_back(t[i - 1].text);
  }
  return r;
}

}  // namespace

std::map<std::string, FunctionBody> function_bodies(const Tokens& t) {
  std::map<std::string, FunctionBody> fns;
  int depth = 0;
  for (int i = 0; i < t.size(); ++i) {
    if (t[i].kind != TokKind::Punct) continue;
    if (t[i].text == "{") ++depth;
    if (t[i].text == "}") --depth;
    if (depth == 0 && t[i].text == "(" && t.ident(i - 1) && t.opens(i) && t.punct(t.match(i) + 1, "{")) {
      int body = t.match(i) + 1;
      fns[t[i - 1].text] = FunctionBody{body, t.match(body)};
      i = t.match(body);
    }
  }
  return fns;
}

std::set<int> last_parallel(const Tokens& t, const Ast& ast) {
  auto fns = function_bodies(t);
  auto it = fns.find("main");
  if (it == fns.end()) return {};
  // Exit handlers registered anywhere run after main, maybe a region. Only inside function
  // bodies: the preprocessed <stdlib.h> declares both at file scope.
  for (auto& [name, f] : fns)
    for (int i = f.b; i < f.e; ++i)
      if (t.ident(i, "atexit") || t.ident(i, "on_exit")) return {};
  // Which functions of this file may reach a region (fixpoint over the call graph).
  std::map<std::string, bool> reaches;
  for (auto& [name, f] : fns) {
    bool r = false;
    for (auto& c : ast.constructs)
      if (is_region(c) && c.all.b > f.b && c.all.b < f.e) r = true;
    reaches[name] = r;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, f] : fns) {
      if (reaches[name]) continue;
      bool unknown = false;
      for (auto& callee : calls_in(t, f.b, f.e, unknown))
        if (fns.count(callee) ? reaches[callee] : !kSafeCalls.count(callee)) unknown = true;
      if (unknown) { reaches[name] = true; changed = true; }
    }
  }
  FunctionBody m = it->second;
  const Construct* cand = nullptr;
  for (auto& c : ast.constructs)
    if (is_region(c) && c.all.b > m.b && c.all.b < m.e && (!cand || c.all.b > cand->all.b)) cand = &c;
  if (!cand) return {};
  for (int i = m.b; i < m.e; ++i)
    if (t.ident(i, "goto")) return {};
  // Inside a loop? Braced bodies end at their brace; others at the next ';' at their depth
  // (a `do` body's `while (...)` does not matter).
  int p = cand->all.b;
  for (int i = m.b; i < p; ++i) {
    if (t[i].kind != TokKind::Keyword) continue;
    const auto& k = t[i].text;
    int body;
    if (k == "do") body = i + 1;
    else if ((k == "for" || k == "while") && t.punct(i + 1, "(") && t.match(i + 1) > 0) body = t.match(i + 1) + 1;
    else continue;
    int end;
    if (t.punct(body, "{")) {
      end = t.match(body);
    } else {
      end = body;
      while (end < m.e && !t.punct(end, ";")) end = t.opens(end) ? t.match(end) + 1 : end + 1;
    }
    if (p >= body && p <= end) return {};
  }
  bool unknown = false;
  for (auto& callee : calls_in(t, cand->all.e, m.e, unknown))
    if (fns.count(callee) ? reaches[callee] : !kSafeCalls.count(callee)) unknown = true;
  if (unknown) return {};
  return {cand->id};
}

}  // namespace cape::tr
