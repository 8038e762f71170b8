// The declaration scanner (declarations.cpp): which names it finds, with what scope and
// storage, and its two queries: the locals a region declared before a barrier, and the
// variables a region shares implicitly.
#include "declarations.h"

#include <algorithm>

#include "unit.h"

namespace cape::tr::test {
namespace {

struct Scanned : Parsed {
  explicit Scanned(std::string src) : Parsed(std::move(src)), decls(t()) {}
  const VarDecl* find(const std::string& name, int n = 0) const {
    for (auto& d : decls.all())
      if (d.name == name && n-- == 0) return &d;
    return nullptr;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> r;
    for (auto& d : decls.all()) r.push_back(d.name);
    return r;
  }
  Declarations decls;
};

using Names_ = std::vector<std::string>;

TEST(Declarations, FileScopeBlocksParametersAndForHeaders) {
  Scanned s(
      "int a, *b = 0, c[3] = {1, 2, 3};\n"
      "static double d;\n"
      "extern int e;\n"
      "int proto(int p, char *q);\n"
      "struct S { int x; } sv;\n"
      "typedef int T;\n"
      "T tv;\n"
      "int f(int n, double m[]) {\n"
      "  register int r = 0;\n"
      "  for (int i = 0; i < n; i++) r += i;\n"
      "  { T **pp = 0; int (*fp)(int) = proto; }\n"
      "  return r;\n"
      "}\n");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.names(), (Names_{"a", "b", "c", "d", "e", "sv", "tv", "n", "m", "r", "i", "pp", "fp"}));
  int end = s.t().size();
  EXPECT_EQ(s.find("a")->scope_end, end);
  EXPECT_TRUE(s.decls.file_scope(*s.find("sv")));
  EXPECT_EQ(s.find("d")->storage, VarDecl::Static);
  EXPECT_EQ(s.find("e")->storage, VarDecl::Extern);
  EXPECT_EQ(s.find("r")->storage, VarDecl::Register);
  EXPECT_FALSE(s.find("r")->addressable());
  // Parameters belong to the body: `double m[]` is a pointer there, so complete.
  EXPECT_TRUE(s.find("n")->param);
  EXPECT_TRUE(s.find("m")->addressable());
  EXPECT_EQ(s.find("n")->scope_end, s.tok("}", 3));
  // The for header's variable is visible in the header only; the block's until its '}'.
  EXPECT_EQ(s.find("i")->scope_end, s.tok(")", 2));
  EXPECT_EQ(s.find("pp")->scope_end, s.tok("}", 2));
}

TEST(Declarations, WhatCannotBeAddressed) {
  Scanned s(
      "extern int inc[];\n"
      "#ifdef FOO\n"
      "int cond;\n"
      "#endif\n"
      "int after_endif;\n"
      "struct P { int x; };\n"
      "struct P *lit = &(struct P){1};\n");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.names(), (Names_{"inc", "cond", "after_endif", "lit"}));
  EXPECT_TRUE(s.find("inc")->incomplete);
  EXPECT_TRUE(s.find("cond")->conditional);
  EXPECT_FALSE(s.find("after_endif")->conditional);
  // A compound literal initializer is not a function definition.
  EXPECT_TRUE(s.find("lit")->addressable());
  EXPECT_FALSE(s.find("lit")->param);
}

TEST(Declarations, StatementsThatDoNotDeclare) {
  Scanned s(
      "int g(int);\n"
      "void f(int x) {\n"
      "  x = g(x);\n"
      "  g(x);\n"
      "  return;\n"
      "}\n");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.names(), (Names_{"x"}));
}

TEST(Declarations, LocalsInScopeAtABarrier) {
  Scanned s(
      "void f(void) {\n"
      "  int outer;\n"
      "#pragma omp parallel\n"
      "  {\n"
      "    int a = 1, b[2];\n"
      "    static int st;\n"
      "    { int gone; }\n"
      "    for (int i = 0; i < 2; i++) a += i;\n"
      "    double a2;\n"
      "#pragma omp barrier\n"
      "    int later;\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(s.ok);
  int region_b = s.tok("{", 1);
  int barrier = s.construct_at(10)->all.b;
  // Automatic, declared in the region before the barrier, still in scope there.
  EXPECT_EQ(s.decls.locals_in_scope(region_b, barrier), (Names_{"a", "b", "a2"}));
  // Halfway: only what was declared before.
  EXPECT_EQ(s.decls.locals_in_scope(region_b, s.tok("static")), (Names_{"a", "b"}));
}

// Session 14: a bound naming a visible variable or calling a function is a variable length
// (a macro or an enum constant is not: the preprocessed unit has numbers there anyway).
TEST(Declarations, VariablyModifiedLocals) {
  Scanned s(
      "enum { K = 4 };\n"
      "int g;\n"
      "int f(int n, double m[n]) {\n"
      "  double a[n], b[K], c[sizeof(int)];\n"
      "  int (*p)[n + 1], q[g][2], r[f(1, 0)];\n"
      "  struct { int x; } st; int u[st.x];\n"
      "  { double in[n]; }\n"
      "  typedef double row[n]; typedef struct { int x; } S; typedef int fixed[4];\n"
      "  row tr; S ts; fixed tf;\n"
      "  return 0;\n"
      "}\n");
  for (auto* v : {"a", "p", "q", "r", "u", "in", "tr"}) EXPECT_TRUE(s.find(v) && s.find(v)->vla) << v;
  for (auto* v : {"b", "c", "m", "n", "g", "st", "ts", "tf"}) EXPECT_TRUE(s.find(v) && !s.find(v)->vla) << v;
  int body = s.tok("double", 1), end = s.tok("return");
  EXPECT_NE(s.decls.vla_local("a", body, end), nullptr);
  EXPECT_EQ(s.decls.vla_local("b", body, end), nullptr);
  EXPECT_EQ(s.decls.vla_local("in", body, end), nullptr);  // out of scope there
  int close = -1;  // the function's '}'
  for (int i = 0; i < s.t().size(); ++i)
    if (s.t()[i].text == "}") close = i;
  const VarDecl* first = s.decls.vla_declared(body, end, close);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->name, "a");
}

TEST(Declarations, ImplicitlySharedVariablesOfARegion) {
  Scanned s(
      "int g1, g2;\n"
      "int tp;\n"
      "void f(int n) {\n"
      "  int x = 0, y = 0, unused = 0;\n"
      "#pragma omp parallel\n"
      "  {\n"
      "    int own = n;\n"
      "    x += own + g2 + y + tp;\n"
      "    s.y = 1;\n"
      "  }\n"
      "}\n"
      "int late;\n");
  ASSERT_TRUE(s.ok);
  Construct* c = s.construct_at(5);
  int at = c->dir.first_tok, b = c->stmt->all.b, e = c->stmt->all.e;
  // With the file's variables (rule (3): functions the region calls may write them), minus
  // the excluded ones; never what the region declares, nor a member named like a variable.
  EXPECT_EQ(s.decls.implicitly_shared(at, b, e, {"tp"}), (Names_{"g1", "g2", "n", "x", "y"}));
  // Without them: the function's variables the region names.
  EXPECT_EQ(s.decls.implicitly_shared(at, b, e, {"x"}, /*file_scope=*/false), (Names_{"n", "y"}));
  EXPECT_TRUE(s.decls.local_visible("x", at));
  EXPECT_FALSE(s.decls.local_visible("g1", at));
  EXPECT_FALSE(s.decls.local_visible("own", at));
}

TEST(Declarations, ALocalHidingAFileVariableIsTheRegions) {
  Scanned s(
      "int v;\n"
      "void f(void) {\n"
      "  int v = 2;\n"
      "#pragma omp parallel\n"
      "  v++;\n"
      "}\n");
  ASSERT_TRUE(s.ok);
  Construct* c = s.construct_at(4);
  EXPECT_EQ(s.decls.implicitly_shared(c->dir.first_tok, c->stmt->all.b, c->stmt->all.e, {}, false),
            (Names_{"v"}));
}

}  // namespace
}  // namespace cape::tr::test
