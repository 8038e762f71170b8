// The canonical loop forms (OpenMP 4.5 Sect. 2.6) that `for` distributes, and the loops it
// refuses, with the position and message of each error.
#include "canonical_loop.h"

#include "unit.h"

namespace cape::tr::test {
namespace {

// The loop of the `#pragma omp for` on line 3 of a function around `header`.
struct LoopOf : Parsed {
  explicit LoopOf(const std::string& header)
      : Parsed("void f(int n, int k) {\n  int i; unsigned u;\n#pragma omp for\n  for (" + header + ") g(i);\n}\n") {
    Construct* c = construct_at(3);
    read = c && read_canonical_loop(drv, t(), *c, L);
  }
  Loop L;
  bool read = false;
};

struct Form {
  std::string header, var, type, lb, op, ub, step;
};

class CanonicalForm : public ::testing::TestWithParam<Form> {};

TEST_P(CanonicalForm, IsRead) {
  const Form& f = GetParam();
  LoopOf p(f.header);
  ASSERT_TRUE(p.ok);
  ASSERT_TRUE(p.read) << f.header << ": " << (p.messages().empty() ? "" : p.messages()[0]);
  EXPECT_EQ(p.L.var, f.var);
  EXPECT_EQ(p.L.type, f.type);
  EXPECT_EQ(p.L.lb, f.lb);
  EXPECT_EQ(p.L.op, f.op);
  EXPECT_EQ(p.L.ub, f.ub);
  EXPECT_EQ(p.L.step, f.step);
  ASSERT_NE(p.L.body, nullptr);
  EXPECT_EQ(p.t()[p.L.body->all.b].text, "g");
  EXPECT_TRUE(p.messages().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Forms, CanonicalForm,
    ::testing::Values(Form{"i = 0; i < n; i++", "i", "", "0", "<", "n", "1"},
                      Form{"int j = n - 1; j >= 0; --j", "j", "int", "n - 1", ">=", "0", "-1"},
                      Form{"i = 0; n > i; ++i", "i", "", "0", "<", "n", "1"},        // ub op var
                      Form{"i = n; 0 <= i; i--", "i", "", "n", ">=", "0", "-1"},
                      Form{"u = 0; u != 100; u += 3", "u", "", "0", "!=", "100", "(3)"},
                      Form{"i = n; i > 0; i -= k", "i", "", "n", ">", "0", "-(k)"},
                      Form{"i = 0; i <= n; i = i + 2", "i", "", "0", "<=", "n", "(2)"},
                      Form{"i = 0; i < n; i = k * 2 + i", "i", "", "0", "<", "n", "(k * 2)"},
                      Form{"i = n; i > 0; i = i - k", "i", "", "n", ">", "0", "-(k)"},
                      Form{"unsigned long w = f(a, b); w < g(n, 2); w++", "w", "unsigned long", "f(a, b)",
                           "<", "g(n, 2)", "1"}));

struct Refused {
  std::string header, at;  // `at`: "line:col: message" of the error
};

class NotCanonical : public ::testing::TestWithParam<Refused> {};

TEST_P(NotCanonical, IsReportedWhereItFails) {
  LoopOf p(GetParam().header);
  ASSERT_TRUE(p.ok);
  EXPECT_FALSE(p.read);
  ASSERT_EQ(p.messages().size(), 1u);
  EXPECT_EQ(p.messages()[0], GetParam().at);
}

const std::string kNot = "loop of 'omp for' is not in canonical form: ";

INSTANTIATE_TEST_SUITE_P(
    Errors, NotCanonical,
    ::testing::Values(
        Refused{";;", "4:8: " + kNot + "the initialisation must be 'var = lb'"},
        Refused{"i, k = 0; i < n; i++", "4:9: " + kNot + "one loop variable only"},
        Refused{"int *p = 0; p < 0; p++", "4:8: " + kNot + "pointer loop variables are not supported yet"},
        Refused{"i = ; i < n; i++", "4:10: " + kNot + "missing lower bound"},
        Refused{"i = 0; k < n; i++", "4:15: " + kNot + "the test must compare 'i' with a bound using <, <=, >, >= or !="},
        Refused{"i = 0; i < n && k; i++", "4:21: " + kNot + "the test must be a single comparison"},
        Refused{"i = 0; i < n; i *= 2", "4:22: " + kNot + "the increment must be ++, --, +=, -= or 'i = i + step'"},
        Refused{"i = 0; i < n", "4:8: " + kNot + "expected 'for (init; test; increment)'"}));

TEST(CanonicalLoop, NotAForLoop) {
  Parsed p("void f(int n) {\n#pragma omp for\n  while (n) n--;\n}\n");
  ASSERT_TRUE(p.ok);
  Loop L;
  EXPECT_FALSE(read_canonical_loop(p.drv, p.t(), *p.construct_at(2), L));
  ASSERT_EQ(p.messages().size(), 1u);
  EXPECT_EQ(p.messages()[0], "3:3: 'omp for' must be followed by a for loop");
}

}  // namespace
}  // namespace cape::tr::test
