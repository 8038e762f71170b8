// last_parallel() decided statically (last_parallel.cpp, docs/translator.md): the set of
// regions after which the slaves may exit, named here by the line of their pragma.
#include "last_parallel.h"

#include "unit.h"

namespace cape::tr::test {
namespace {

std::set<int> last_lines(const std::string& src) {
  Parsed p(src);
  EXPECT_TRUE(p.ok);
  std::set<int> lines;
  for (int id : last_parallel(p.t(), p.drv.ast()))
    for (auto& c : p.drv.ast().constructs)
      if (c.id == id) lines.insert(p.t()[c.dir.first_tok].line);
  return lines;
}

// main with `body` from line 5 on, after helpers on lines 1-3.
std::string program(const std::string& body) {
  return "void quiet(int *a) { a[0] = 1; }\n"
         "void loud(void) {\n#pragma omp parallel\n  ;\n}\n"  // lines 2-5
         "int main(void) {\n  int a[4];\n" + body + "  return 0;\n}\n";
}

TEST(LastParallel, TheLastRegionOfMain) {
  EXPECT_EQ(last_lines(program("#pragma omp parallel\n  a[0] = 0;\n#pragma omp parallel for\n"
                               "  for (int i = 0; i < 4; i++) a[i] = i;\n  printf(\"%d\\n\", a[0]);\n")),
            (std::set<int>{10}));
}

TEST(LastParallel, CallsAfterItThatCannotReachARegion) {
  // Library functions of the list, and this file's functions that call nothing else.
  EXPECT_EQ(last_lines(program("#pragma omp parallel\n  a[0] = 0;\n  quiet(a);\n  free(0);\n")),
            (std::set<int>{8}));
}

TEST(LastParallel, NoneWhenSomethingAfterItMayReachOne) {
  // A function of the file with a region, an unknown function, a call through a pointer.
  EXPECT_TRUE(last_lines(program("#pragma omp parallel\n  a[0] = 0;\n  loud();\n")).empty());
  EXPECT_TRUE(last_lines(program("#pragma omp parallel\n  a[0] = 0;\n  elsewhere();\n")).empty());
  EXPECT_TRUE(last_lines(program("  void (*fp)(int *) = quiet;\n#pragma omp parallel\n  a[0] = 0;\n"
                                 "  (*fp)(a);\n")).empty());
}

TEST(LastParallel, NoneInsideALoop) {
  EXPECT_TRUE(last_lines(program("  for (int k = 0; k < 2; k++) {\n#pragma omp parallel\n  a[0] = k;\n  }\n")).empty());
  EXPECT_TRUE(last_lines(program("  while (a[0])\n#pragma omp parallel\n    a[0] = 0;\n")).empty());
  EXPECT_TRUE(last_lines(program("  do {\n#pragma omp parallel\n  a[0] = 0;\n  } while (a[1]);\n")).empty());
  // After a loop is fine.
  EXPECT_EQ(last_lines(program("  for (int k = 0; k < 2; k++) a[k] = 0;\n#pragma omp parallel\n  a[0] = 0;\n")),
            (std::set<int>{9}));
}

TEST(LastParallel, NoneWithGotoOrExitHandlers) {
  EXPECT_TRUE(last_lines(program("again:\n#pragma omp parallel\n  a[0]++;\n  if (a[0] < 3) goto again;\n")).empty());
  EXPECT_TRUE(last_lines(program("  atexit(0);\n#pragma omp parallel\n  a[0] = 0;\n")).empty());
}

TEST(LastParallel, ExitHandlersDeclaredOnlyDoNotCount) {
  // The preprocessed <stdlib.h> declares atexit and on_exit: cape-cc translates that unit.
  EXPECT_EQ(last_lines("extern int atexit(void (*f)(void));\n"
                       "extern int on_exit(void (*f)(int, void *), void *arg);\n" +
                       program("#pragma omp parallel\n  a[0] = 0;\n")),
            (std::set<int>{10}));
}

TEST(LastParallel, NoneWithoutMainOrRegion) {
  EXPECT_TRUE(last_lines("void f(void) {\n#pragma omp parallel\n  ;\n}\n").empty());
  EXPECT_TRUE(last_lines(program("  quiet(a);\n")).empty());
}

TEST(LastParallel, FunctionBodies) {
  Parsed p("int x;\nstatic int f(int a) { return a; }\nint main(void) { return f(1); }\n");
  auto fns = function_bodies(p.t());
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(p.t()[fns["f"].b].text, "{");
  EXPECT_EQ(fns["f"].e, p.t().match(fns["f"].b));
  EXPECT_EQ(p.t()[fns["main"].b].line, 3);
}

}  // namespace
}  // namespace cape::tr::test
