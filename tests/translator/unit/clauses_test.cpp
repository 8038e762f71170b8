// Clause reading (clauses.cpp): what each entry of the table takes from a pragma, and the
// errors and notes it reports.
#include "clauses.h"

#include "unit.h"

namespace cape::tr::test {
namespace {

struct ClausesOf : Parsed {
  ClausesOf(const std::string& pragma, const Names& allowed, bool whole_team = false)
      : Parsed("void f(void) {\n#pragma omp " + pragma + "\n  g();\n}\n") {
    if (Construct* c = construct_at(2)) cl = read_clauses(drv, t(), c->dir, allowed, whole_team);
  }
  Clauses cl;
};

TEST(Clauses, DataSharingLists) {
  ClausesOf p("parallel private(a, b) firstprivate(c) shared(d) copyin(e) default(none)", kParallelClauses);
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(p.cl.ok);
  EXPECT_EQ(p.cl.priv, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.cl.firstpriv, (std::vector<std::string>{"c"}));
  EXPECT_EQ(p.cl.shared, (std::vector<std::string>{"d"}));
  EXPECT_EQ(p.cl.copyin, (std::vector<std::string>{"e"}));
  EXPECT_TRUE(p.cl.default_none);
  EXPECT_TRUE(p.messages().empty());
}

TEST(Clauses, ReductionsScheduleAndConditions) {
  ClausesOf p("parallel for reduction(+: s, t) reduction(max: m) schedule(dynamic, 4) if(parallel: n > 1) "
              "num_threads(k + 1) nowait",
              unite(kParallelClauses, kForClauses));
  EXPECT_TRUE(p.cl.ok);
  ASSERT_EQ(p.cl.red.size(), 3u);
  EXPECT_EQ(p.cl.red[0].op, "+");
  EXPECT_EQ(p.cl.red[1].var, "t");
  EXPECT_EQ(p.cl.red[2].op, "max");
  EXPECT_EQ(p.cl.chunk, "(4)");
  EXPECT_EQ(p.cl.cond, "(n > 1)");
  EXPECT_EQ(p.cl.num_threads, "(k + 1)");
  EXPECT_TRUE(p.cl.nowait);
  // dynamic runs as static: a note, not an error.
  ASSERT_EQ(p.messages().size(), 1u);
  EXPECT_EQ(p.messages()[0], "2:63: schedule(dynamic) is run as schedule(static, 4): CAPE distributes every "
                             "chunk before the loop starts");
}

TEST(Clauses, ErrorsSayWhatAndWhere) {
  ClausesOf p("parallel lastprivate(x) num_threads(2) reduction(foo: y) private(a[1]) shared(b) private(b)",
              kParallelClauses, /*whole_team=*/true);
  EXPECT_FALSE(p.cl.ok);
  auto m = p.messages();
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], "2:22: clause 'lastprivate' is not valid on 'omp parallel'");
  EXPECT_EQ(m[1].rfind("2:37: clause 'num_threads' on 'omp parallel' is not supported yet", 0), 0u) << m[1];
  EXPECT_EQ(m[2].rfind("2:62: unknown reduction operator 'foo'", 0), 0u) << m[2];
  EXPECT_EQ(m[3], "2:79: expected ',' in the list of clause 'private', found '[' (array sections and members "
                  "are not supported)");
  EXPECT_EQ(m[4], "2:102: variable 'b' appears in both 'shared' and 'private' clauses");
}

TEST(Clauses, FirstprivateWithLastprivateIsAllowed) {
  ClausesOf p("for firstprivate(x) lastprivate(x)", kForClauses);
  EXPECT_TRUE(p.cl.ok);
  EXPECT_TRUE(p.messages().empty());
}

TEST(Clauses, SimdHintsAreDroppedWithANote) {
  ClausesOf p("simd safelen(4) linear(i)", kSimdClauses);
  auto m = p.messages();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], "2:18: clause 'safelen' dropped with 'simd'");
  EXPECT_EQ(m[1], "2:29: clause 'linear' is not supported yet (it belongs to the dropped simd part)");
}

TEST(Clauses, ArgumentsAreRequired) {
  ClausesOf p("parallel private", kParallelClauses);
  EXPECT_FALSE(p.cl.ok);
  ASSERT_EQ(p.messages().size(), 1u);
  EXPECT_EQ(p.messages()[0], "2:22: clause 'private' needs an argument in parentheses");
}

}  // namespace
}  // namespace cape::tr::test
