#include "declarations.h"

#include <algorithm>

namespace cape::tr {
namespace {

// Per token: how many #if/#ifdef/#ifndef blocks of the trivia before it are open.
std::vector<int> conditional_depths(const Tokens& t) {
  std::vector<int> r(t.size() + 1, 0);
  for (int i = 0, depth = 0; i < t.size(); ++i) {
    const std::string& tv = t[i].trivia;
    for (size_t pos = 0; pos < tv.size();) {
      size_t eol = tv.find('\n', pos);
      if (eol == std::string::npos) eol = tv.size();
      size_t k = tv.find_first_not_of(" \t", pos);
      if (k < eol && tv[k] == '#') {
        size_t w = tv.find_first_not_of(" \t", k + 1);
        std::string d = w < eol ? tv.substr(w, std::min(eol, tv.find_first_of(" \t(", w)) - w) : "";
        if (d == "if" || d == "ifdef" || d == "ifndef") ++depth;
        else if (d == "endif" && depth > 0) --depth;
      }
      pos = eol + 1;
    }
    r[i] = depth;
  }
  return r;
}

void add_once(std::vector<std::string>& v, const std::string& n) {
  if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
}

}  // namespace

// A statement declares when it starts with a type word, with `name name` followed by
// = ; , [ (, or with `name *`; its declarators are read up to the ';' at its depth. A
// `name(...)` followed by `{` is a function definition: its parameters belong to its body.
Declarations::Declarations(const Tokens& t) : t_(t) {
  static const Names types = {"int", "long", "short", "char", "float", "double", "unsigned",
                              "signed", "_Bool", "bool", "const", "volatile", "struct", "union",
                              "enum", "void", "static", "extern", "register", "inline",
                              "restrict", "__restrict", "__restrict__", "_Thread_local",
                              "__thread", "auto", "__inline", "__inline__", "_Complex",
                              "size_t", "ssize_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t",
                              "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                              "intptr_t", "uintptr_t", "__attribute__"};
  static const Names not_decl = {"return", "goto", "case", "default", "break", "continue",
                                 "sizeof", "typedef"};
  const int n = t.size();
  std::vector<int> scope_ends;
  std::vector<int> cond_depth = conditional_depths(t);
  auto end_of_scope = [&] { return scope_ends.empty() ? n : scope_ends.back(); };
  // A bracket before the declarator's '=' naming a variable visible there (a macro or an enum
  // constant is none) or calling a function (not sizeof): a variable length, as gcc decides
  // by the bound's value; a function-like macro is taken for one (its local is then kept the
  // slower way).
  auto variable_bounds = [&](int p, int q) {
    for (int x = p; x < q && !t.punct(x, "="); ++x) {
      if (!t.punct(x, "[") || !t.opens(x)) continue;
      for (int y = x + 1; y < t.match(x); ++y) {
        if (!t.ident(y) || t.punct(y - 1, ".") || t.punct(y - 1, "->")) continue;
        if (t.punct(y + 1, "(") && !t.ident(y, "sizeof") && !t.ident(y, "_Alignof")) return true;
        for (auto& d : decls_)
          if (d.name == t[y].text && d.tok < y && y < d.scope_end && !d.conditional) return true;
      }
    }
    return false;
  };
  // `typedef double row[n];`: a variably modified type name, whose variables are too.
  Names vm_types;
  auto vm_type = [&](int p, int q) {
    for (int x = p; x < q; ++x)
      if (t.ident(x) && vm_types.count(t[x].text)) return true;
    return false;
  };
  // Names in declarator tokens [p, q): the last identifier before '=', '[' or a group.
  // `params`: a parameter list, where `T a[]` is a pointer.
  auto declarators = [&](int p, int q, int scope_end, bool params) {
    VarDecl::Storage storage = VarDecl::Auto;
    for (int x = p; x < q && !params; ++x) {
      if (t.ident(x, "register")) storage = VarDecl::Register;
      else if (t.ident(x, "static") && storage == VarDecl::Auto) storage = VarDecl::Static;
      else if (t.ident(x, "extern") && storage == VarDecl::Auto) storage = VarDecl::Extern;
    }
    int part = p;
    for (int k = p; k <= q; ++k) {
      bool end = k == q || t.punct(k, ",");
      if (!end) {
        if (t.opens(k) && (t.punct(k, "(") || t.punct(k, "[") || t.punct(k, "{"))) k = t.match(k);
        continue;
      }
      int name = -1;
      bool stop = false, incomplete = false;
      for (int x = part; x + 1 < k && !params; ++x)
        if (t.punct(x, "[") && t.punct(x + 1, "]")) incomplete = true;
      for (int x = part; x < k && !stop; ++x) {
        if (t.punct(x, "=") || t.punct(x, "[") || t.punct(x, ":")) break;
        if (t.punct(x, "{") && t.opens(x)) { name = -1; x = t.match(x); continue; }
        if (t.punct(x, "(") && t.opens(x)) {
          if (name >= 0 && x == name + 1) { name = -1; stop = true; break; }  // a prototype
          if (t.punct(x + 1, "*") && t.ident(x + 2)) name = x + 2;  // (*fp)(...)
          x = t.match(x);
          continue;
        }
        if (t.ident(x) && !types.count(t[x].text) && !t.punct(x + 1, "(")) name = x;
        else if (t.ident(x) && t.punct(x + 1, "(") && !types.count(t[x].text)) { name = -1; stop = true; }
      }
      // A system header's declarations are not the program's data (and an `extern` one may
      // name a variable of a library the program does not link).
      if (name >= 0 && !stop && !t[name].system) {
        decls_.push_back({t[name].text, name, scope_end, storage, params, incomplete, cond_depth[name] != 0});
        decls_.back().vla = !params && (variable_bounds(part, k) || vm_type(p, k));
      }
      part = k + 1;
    }
  };
  bool start = true;
  for (int i = 0; i < n; ++i) {
    if (t.skip_pragma(i, n)) {
      start = true;
      continue;
    }
    if (t.punct(i, "{")) { scope_ends.push_back(t.opens(i) ? t.match(i) : n); start = true; continue; }
    if (t.punct(i, "}")) { if (!scope_ends.empty()) scope_ends.pop_back(); start = true; continue; }
    if (t.punct(i, ";")) { start = true; continue; }
    if (!start) {
      // `for (int i = 0; ...)`: the header declares i for the loop.
      if (t.punct(i, "(") && i > 0 && t[i - 1].kind == TokKind::Keyword && t[i - 1].text == "for" &&
          t.opens(i)) {
        int semi = i + 1;
        while (semi < t.match(i) && !t.punct(semi, ";")) semi = t.opens(semi) ? t.match(semi) + 1 : semi + 1;
        if (t.ident(i + 1) && (types.count(t[i + 1].text) || t.ident(i + 2) || t.punct(i + 2, "*")))
          declarators(i + 1, semi, t.match(i), false);
        i = t.match(i);
        continue;
      }
      if ((t.punct(i, "(") || t.punct(i, "[")) && t.opens(i)) i = t.match(i);
      continue;
    }
    start = false;
    if (t[i].kind == TokKind::Keyword) {
      if (t[i].text == "else" || t[i].text == "do") start = true;  // a statement follows
      continue;
    }
    if (t.ident(i, "typedef")) {
      int k = i, name = -1;
      while (k < n && !t.punct(k, ";")) {
        if (t.ident(k) && (t.punct(k + 1, "[") || t.punct(k + 1, ";") || t.punct(k + 1, ")"))) name = k;
        k = t.opens(k) && !t.punct(k, "}") ? t.match(k) + 1 : k + 1;
      }
      if (name >= 0 && (variable_bounds(i, k) || vm_type(i, name))) {
        vm_types.insert(t[name].text);
        vm_typedefs_.push_back({t[name].text, name, end_of_scope()});
        vm_typedefs_.back().vla = true;
      }
      continue;
    }
    if (!t.ident(i) || not_decl.count(t[i].text)) continue;
    auto next_is = [&](int k) {
      return t.punct(k, "=") || t.punct(k, ";") || t.punct(k, ",") || t.punct(k, "[") || t.punct(k, "(");
    };
    bool decl = types.count(t[i].text) || (t.ident(i + 1) && next_is(i + 2)) ||
                (t.punct(i + 1, "*") && (t.ident(i + 2) || t.punct(i + 2, "*")));
    if (!decl) continue;
    int k = i;
    while (k < n && !t.punct(k, ";")) {
      // A function definition: its parameters, then its body as a block (a `(T[]){...}`
      // compound literal has no name before its parenthesis).
      if (t.punct(k, "(") && t.ident(k - 1) && t.opens(k) && t.punct(t.match(k) + 1, "{")) break;
      k = t.opens(k) && !t.punct(k, "}") ? t.match(k) + 1 : k + 1;
    }
    if (k < n && t.punct(k, "(")) {
      int close = t.match(k);
      declarators(k + 1, close, t.match(close + 1), true);
      i = close;  // the '{' comes next
      start = true;
      continue;
    }
    declarators(i, k, end_of_scope(), false);
    i = k - 1;
  }
}

std::vector<std::string> Declarations::locals_in_scope(int b, int e) const {
  std::vector<std::string> r;
  for (auto& d : decls_)
    if (!d.param && d.storage == VarDecl::Auto && d.tok >= b && d.tok < e && e < d.scope_end) add_once(r, d.name);
  return r;
}

const VarDecl* Declarations::vla_local(const std::string& n, int b, int at) const {
  const VarDecl* found = nullptr;
  for (auto& d : decls_)
    if (d.name == n && d.tok < at && at < d.scope_end) found = &d;
  return found && found->vla && found->tok >= b && !found->param && found->storage == VarDecl::Auto ? found
                                                                                                      : nullptr;
}

const VarDecl* Declarations::vla_declared(int b, int e, int end) const {
  const VarDecl* first = nullptr;
  for (auto* v : {&decls_, &vm_typedefs_})
    for (auto& d : *v)
      if (d.vla && !d.param && d.storage == VarDecl::Auto && d.tok >= b && d.tok < e && d.scope_end == end &&
          (!first || d.tok < first->tok))
        first = &d;
  return first;
}

std::vector<std::string> Declarations::implicitly_shared(int at, int b, int e,
                                                         const std::vector<std::string>& exclude,
                                                         bool file_scope) const {
  Names visible, inside, file_vars;
  for (auto& d : decls_) {
    if (!d.addressable()) continue;
    if (d.tok < at && at < d.scope_end) visible.insert(d.name);
    if (d.tok >= b && d.tok < e) inside.insert(d.name);
  }
  auto excluded = [&](const std::string& n) {
    return std::find(exclude.begin(), exclude.end(), n) != exclude.end();
  };
  std::vector<std::string> r;
  for (auto& d : decls_)
    if (d.addressable() && this->file_scope(d) && d.tok < at) {
      file_vars.insert(d.name);
      if (file_scope && !inside.count(d.name) && !excluded(d.name)) add_once(r, d.name);
    }
  for (int i = b; i < e; ++i) {
    if (t_.skip_pragma(i, e)) continue;
    if (!t_.ident(i) || t_.punct(i - 1, ".") || t_.punct(i - 1, "->")) continue;
    const auto& n = t_[i].text;
    if (!visible.count(n) || inside.count(n)) continue;
    // Left to the file's statics function, unless a local of the same name hides it.
    if (!file_scope && file_vars.count(n) && !local_visible(n, at)) continue;
    if (excluded(n)) continue;
    add_once(r, n);
  }
  return r;
}

int Declarations::array_dims(const std::string& n, int at) const {
  const VarDecl* found = nullptr;
  for (auto& d : decls_)  // the innermost visible: the last one declared before `at` still in scope
    if (d.name == n && d.tok < at && at < d.scope_end) found = &d;
  if (!found) return -1;
  if (found->param) return 0;
  int dims = 0;
  for (int k = found->tok + 1; t_.punct(k, "[") && t_.opens(k); k = t_.match(k) + 1) ++dims;
  return dims;
}

std::string Declarations::first_extent(const std::string& n, int at) const {
  const VarDecl* found = nullptr;
  for (auto& d : decls_)
    if (d.name == n && d.tok < at && at < d.scope_end) found = &d;
  if (!found || found->param) return "";
  int k = found->tok + 1;
  if (!t_.punct(k, "[") || !t_.opens(k)) return "";
  return t_.text(k + 1, t_.match(k));
}

bool Declarations::file_scope_var(const std::string& n, int at) const {
  const VarDecl* found = nullptr;
  for (auto& d : decls_)
    if (d.name == n && d.tok < at && at < d.scope_end) found = &d;
  return found && file_scope(*found);
}

bool Declarations::local_visible(const std::string& n, int at) const {
  for (auto& d : decls_)
    if (d.addressable() && d.name == n && !file_scope(d) && d.tok < at && at < d.scope_end) return true;
  return false;
}

}  // namespace cape::tr
