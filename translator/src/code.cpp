#include "code.h"

#include <cctype>
#include <stdexcept>

namespace cape::tr {

Holes::Holes(std::initializer_list<std::pair<std::string_view, std::string>> holes) {
  for (auto& [n, v] : holes) set(n, v);
}

Holes& Holes::set(std::string_view name, std::string value) {
  for (auto& h : holes_)
    if (h.first == name) {
      h.second = std::move(value);
      return *this;
    }
  holes_.emplace_back(std::string(name), std::move(value));
  return *this;
}

Holes Holes::with(std::string_view name, std::string value) const {
  Holes h = *this;
  h.set(name, std::move(value));
  return h;
}

std::string Holes::fill(std::string_view t) const {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string r;
  r.reserve(t.size() * 2);
  for (size_t i = 0; i < t.size();) {
    if (t[i] != '$') {
      r += t[i++];
      continue;
    }
    size_t b = i + 1, e;
    if (b < t.size() && t[b] == '{') {
      e = t.find('}', ++b);
      if (e == std::string_view::npos) throw std::logic_error("unclosed ${ in a template");
    } else {
      for (e = b; e < t.size() && word(t[e]); ++e) {}
    }
    std::string_view name = t.substr(b, e - b);
    const std::string* value = nullptr;
    for (auto& h : holes_)
      if (h.first == name) value = &h.second;
    if (!value) throw std::logic_error("template hole $" + std::string(name) + " has no value");
    r += *value;
    size_t next = e < t.size() && t[e] == '}' && t[i + 1] == '{' ? e + 1 : e;
    if ((i == 0 || t[i - 1] == '\n') && next < t.size() && t[next] == '\n') ++next;  // a block
    i = next;
  }
  return r;
}

std::string gen_name(std::string_view stem, int id) {
  std::string r = "cape_";  // built with +=: gcc 12 -O2 gives a false -Wrestrict on "_" + to_string()
  r += stem;
  r += '_';
  r += std::to_string(id);
  return r;
}

std::string gen_name(std::string_view stem, int id, const std::string& var) {
  std::string r = gen_name(stem, id);
  r += '_';
  r += var;
  return r;
}

}  // namespace cape::tr
