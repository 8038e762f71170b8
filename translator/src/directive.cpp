#include "directive.h"

#include <array>
#include <string_view>

#include "driver.h"

namespace cape::tr {
namespace {

// Every directive name of OpenMP 5.2 for C, so that multi-word names are read whole and
// an unsupported one is named exactly in its error.
constexpr std::array<std::string_view, 60> kNames = {
    "parallel", "for", "parallel for", "parallel for simd", "for simd", "simd", "sections",
    "section", "parallel sections", "single", "master", "masked", "parallel master",
    "parallel masked", "barrier", "critical", "atomic", "ordered", "flush", "task", "taskloop",
    "taskloop simd", "taskwait", "taskyield", "taskgroup", "threadprivate", "target",
    "target data", "target enter data", "target exit data", "target update", "target teams",
    "target parallel", "target parallel for", "target simd", "target teams distribute",
    "target teams distribute parallel for", "teams", "teams distribute", "distribute",
    "distribute simd", "distribute parallel for", "declare reduction", "declare simd",
    "declare target", "end declare target", "declare mapper", "declare variant", "cancel",
    "cancellation point", "scope", "loop", "parallel loop", "requires", "workshare",
    "metadirective", "allocate", "scan", "depobj", "error"};

bool is_prefix_of_name(const std::string& words) {
  for (auto n : kNames) {
    if (n == words) return true;
    if (n.size() > words.size() && n.substr(0, words.size()) == words && n[words.size()] == ' ')
      return true;
  }
  return false;
}

bool is_word(const Token& t) {
  return !t.text.empty() && (std::isalpha(static_cast<unsigned char>(t.text[0])) || t.text[0] == '_');
}

}  // namespace

Directive parse_directive(Driver& drv, int first, int end) {
  auto& toks = drv.tokens();
  Directive d;
  d.first_tok = first;
  d.end_tok = end;
  int i = first + 1;
  if (i >= end) return d;
  d.name = toks[i].text;
  d.name_toks.push_back(i++);
  while (i < end && is_word(toks[i]) && is_prefix_of_name(d.name + " " + toks[i].text)) {
    d.name += " " + toks[i].text;
    d.name_toks.push_back(i++);
  }
  // critical(name) and similar: the parenthesis belongs to the directive.
  if (i < end && toks[i].text == "(" && (d.name == "critical" || d.name == "flush" ||
                                         d.name == "threadprivate" || d.name == "allocate" ||
                                         d.name == "declare reduction" || d.name == "depobj" ||
                                         d.name == "declare mapper" || d.name == "declare variant")) {
    int depth = 0;
    for (; i < end; ++i) {
      if (toks[i].text == "(") ++depth;
      if (toks[i].text == ")" && --depth == 0) { ++i; break; }
    }
  }
  while (i < end) {
    if (toks[i].text == ",") { ++i; continue; }
    if (!is_word(toks[i])) {
      drv.error_at(i, "expected a clause name in '#pragma omp " + d.name + "', found '" +
                          toks[i].text + "'");
      break;
    }
    Clause c;
    c.name = toks[i].text;
    c.tok = i++;
    if (i < end && toks[i].text == "(") {
      c.has_parens = true;
      int depth = 1;
      int open = i++;
      for (; i < end; ++i) {
        if (toks[i].text == "(") ++depth;
        if (toks[i].text == ")" && --depth == 0) break;
        c.args.push_back(i);
      }
      if (i >= end) {
        drv.error_at(open, "missing ')' in clause '" + c.name + "'");
        d.clauses.push_back(std::move(c));
        break;
      }
      ++i;  // ')'
      if (c.args.empty()) drv.error_at(c.tok, "clause '" + c.name + "' needs an argument");
    }
    d.clauses.push_back(std::move(c));
  }
  return d;
}

}  // namespace cape::tr
