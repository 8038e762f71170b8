// The token layer: bracket pairs (digraphs too), `#pragma omp` lines skipped whole, text.
#include "unit.h"

namespace cape::tr::test {
namespace {

TEST(Tokens, PairsBracketsAndDigraphs) {
  Parsed p("int a<:2:> = {1, f((2))};\n");
  ASSERT_TRUE(p.ok);
  const Tokens& t = p.t();
  int lb = p.tok("<:"), rb = p.tok(":>");
  EXPECT_EQ(t.match(lb), rb);
  EXPECT_EQ(t.match(rb), lb);
  EXPECT_TRUE(t.opens(lb));
  EXPECT_FALSE(t.opens(rb));
  int brace = p.tok("{");
  EXPECT_EQ(t.match(brace), p.tok("}"));
  int outer = p.tok("("), inner = p.tok("(", 1);
  EXPECT_EQ(t.match(outer), p.tok(")", 1));
  EXPECT_EQ(t.match(inner), p.tok(")"));
  EXPECT_EQ(t.match(p.tok("int")), -1);
}

TEST(Tokens, PunctAndIdentAreBoundsChecked) {
  Parsed p("x;\n");
  const Tokens& t = p.t();
  EXPECT_TRUE(t.ident(0));
  EXPECT_TRUE(t.ident(0, "x"));
  EXPECT_FALSE(t.ident(0, "y"));
  EXPECT_TRUE(t.punct(1, ";"));
  EXPECT_FALSE(t.punct(-1, ";"));
  EXPECT_FALSE(t.ident(-1));
  EXPECT_FALSE(t.punct(t.size(), ";"));
}

TEST(Tokens, SkipPragmaStopsAtTheLineEnd) {
  Parsed p("void f(void) {\n#pragma omp parallel for private(i)\n  for (;;) g();\n}\n");
  ASSERT_TRUE(p.ok);
  const Tokens& t = p.t();
  int start = -1;
  for (int i = 0; i < t.size(); ++i)
    if (t[i].kind == TokKind::PragmaStart) start = i;
  ASSERT_GE(start, 0);
  int i = start - 1;
  EXPECT_FALSE(t.skip_pragma(i, t.size()));
  EXPECT_EQ(i, start - 1);
  i = start;
  EXPECT_TRUE(t.skip_pragma(i, t.size()));
  EXPECT_EQ(t[i].kind, TokKind::PragmaEnd);
  EXPECT_EQ(t[i + 1].text, "for");
  // Bounded by e when the line is cut.
  i = start;
  EXPECT_TRUE(t.skip_pragma(i, start + 2));
  EXPECT_EQ(i, start + 2);
}

TEST(Tokens, TextIsSingleSpacedWhereTheSourceHadSpace) {
  Parsed p("a  =b +\n  c ;\n");
  EXPECT_EQ(p.t().text(0, 5), "a =b + c");
  EXPECT_EQ(p.t().text(std::vector<int>{0, 2, 3}), "ab +");  // b had no space before it
}

}  // namespace
}  // namespace cape::tr::test
