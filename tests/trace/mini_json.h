// A small JSON reader for the trace tests: the whole grammar (RFC 8259), values as a tree.
// Throws std::runtime_error with the offset on anything that is not JSON.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cape::test {

struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json& operator[](const std::string& k) const {
    auto it = fields.find(k);
    if (it == fields.end()) throw std::runtime_error("no field " + k);
    return it->second;
  }
  bool has(const std::string& k) const { return fields.count(k) != 0; }

  static Json parse(const std::string& text) {
    size_t at = 0;
    Json j = value(text, at);
    ws(text, at);
    if (at != text.size()) fail(at, "trailing text");
    return j;
  }

 private:
  [[noreturn]] static void fail(size_t at, const std::string& what) {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(at));
  }
  static void ws(const std::string& t, size_t& at) {
    while (at < t.size() && (t[at] == ' ' || t[at] == '\n' || t[at] == '\r' || t[at] == '\t')) ++at;
  }
  static void expect(const std::string& t, size_t& at, const char* word) {
    for (const char* p = word; *p; ++p, ++at)
      if (at >= t.size() || t[at] != *p) fail(at, std::string("expected ") + word);
  }
  static std::string str(const std::string& t, size_t& at) {
    if (t[at] != '"') fail(at, "expected a string");
    ++at;
    std::string o;
    for (;;) {
      if (at >= t.size()) fail(at, "unterminated string");
      unsigned char c = static_cast<unsigned char>(t[at++]);
      if (c == '"') return o;
      if (c < 0x20) fail(at, "control character in a string");
      if (c != '\\') {
        o += static_cast<char>(c);
        continue;
      }
      if (at >= t.size()) fail(at, "bad escape");
      char e = t[at++];
      switch (e) {
        case '"': case '\\': case '/': o += e; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'n': o += '\n'; break;
        case 'r': o += '\r'; break;
        case 't': o += '\t'; break;
        case 'u': {
          if (at + 4 > t.size()) fail(at, "bad \\u escape");
          for (int i = 0; i < 4; ++i)
            if (!std::isxdigit(static_cast<unsigned char>(t[at + i]))) fail(at, "bad \\u escape");
          long cp = std::strtol(t.substr(at, 4).c_str(), nullptr, 16);
          at += 4;
          o += cp < 0x80 ? static_cast<char>(cp) : '?';
          break;
        }
        default: fail(at, "bad escape");
      }
    }
  }
  static Json value(const std::string& t, size_t& at) {
    ws(t, at);
    if (at >= t.size()) fail(at, "unexpected end");
    Json j;
    char c = t[at];
    if (c == '{') {
      j.kind = object;
      ++at;
      ws(t, at);
      if (t[at] == '}') return ++at, j;
      for (;;) {
        ws(t, at);
        std::string k = str(t, at);
        ws(t, at);
        expect(t, at, ":");
        j.fields[k] = value(t, at);
        ws(t, at);
        if (at < t.size() && t[at] == ',') { ++at; continue; }
        expect(t, at, "}");
        return j;
      }
    }
    if (c == '[') {
      j.kind = array;
      ++at;
      ws(t, at);
      if (t[at] == ']') return ++at, j;
      for (;;) {
        j.items.push_back(value(t, at));
        ws(t, at);
        if (at < t.size() && t[at] == ',') { ++at; continue; }
        expect(t, at, "]");
        return j;
      }
    }
    if (c == '"') {
      j.kind = string;
      j.s = str(t, at);
      return j;
    }
    if (c == 't') return expect(t, at, "true"), j.kind = boolean, j.b = true, j;
    if (c == 'f') return expect(t, at, "false"), j.kind = boolean, j;
    if (c == 'n') return expect(t, at, "null"), j;
    // A number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    size_t from = at;
    if (t[at] == '-') ++at;
    if (at >= t.size() || !std::isdigit(static_cast<unsigned char>(t[at]))) fail(at, "unexpected character");
    if (t[at] == '0') ++at;
    else while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at]))) ++at;
    if (at < t.size() && t[at] == '.') {
      ++at;
      if (at >= t.size() || !std::isdigit(static_cast<unsigned char>(t[at]))) fail(at, "bad number");
      while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at]))) ++at;
    }
    if (at < t.size() && (t[at] == 'e' || t[at] == 'E')) {
      ++at;
      if (at < t.size() && (t[at] == '+' || t[at] == '-')) ++at;
      if (at >= t.size() || !std::isdigit(static_cast<unsigned char>(t[at]))) fail(at, "bad number");
      while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at]))) ++at;
    }
    j.kind = number;
    j.n = std::strtod(t.substr(from, at - from).c_str(), nullptr);
    return j;
  }
};

}  // namespace cape::test
