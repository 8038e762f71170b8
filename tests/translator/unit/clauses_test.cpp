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
  ClausesOf p("parallel lastprivate(x) num_threads(2) num_threads(3) reduction(foo: y) private(a[1]) shared(b) "
              "private(b)",
              kParallelClauses, /*whole_team=*/true);
  EXPECT_FALSE(p.cl.ok);
  auto m = p.messages();
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], "2:22: clause 'lastprivate' is not valid on 'omp parallel'");
  // A clause that may appear once: reported once, at its second place, with the first's column.
  EXPECT_EQ(m[1], "2:52: clause 'num_threads' may appear once on 'omp parallel', given 2 times (first at column 37)");
  EXPECT_EQ(m[2].rfind("2:77: unknown reduction operator 'foo'", 0), 0u) << m[2];
  EXPECT_EQ(m[3], "2:94: expected ',' in the list of clause 'private', found '[' (array sections and members "
                  "are not supported)");
  EXPECT_EQ(m[4], "2:117: variable 'b' appears in both 'shared' and 'private' clauses");
}

TEST(Clauses, ArraySectionsAndCollapse) {
  ClausesOf p("for reduction(+: h, a[lo:n * 2], b[:4], c[i + 1:]) collapse(3)", kForClauses);
  EXPECT_TRUE(p.cl.ok);
  ASSERT_EQ(p.cl.red.size(), 4u);
  EXPECT_FALSE(p.cl.red[0].section);
  EXPECT_TRUE(p.cl.red[1].section);
  EXPECT_EQ(p.cl.red[1].var, "a");
  EXPECT_EQ(p.cl.red[1].lo, "lo");
  EXPECT_EQ(p.cl.red[1].len, "n * 2");
  EXPECT_EQ(p.cl.red[2].lo, "");
  EXPECT_EQ(p.cl.red[2].len, "4");
  EXPECT_EQ(p.cl.red[3].lo, "i + 1");
  EXPECT_EQ(p.cl.red[3].len, "");
  EXPECT_EQ(p.cl.collapse, 3);
  ClausesOf q("for reduction(+: a[0:2][0:2]) collapse(N)", kForClauses);
  EXPECT_FALSE(q.cl.ok);
  auto m = q.messages();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].rfind("2:36: array sections of more than one dimension are not supported yet", 0), 0u) << m[0];
  EXPECT_EQ(m[1].rfind("2:43: clause 'collapse(N)': expected a constant from 1 to 8", 0), 0u) << m[1];
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
