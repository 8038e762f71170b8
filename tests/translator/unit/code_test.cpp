// Named holes in generated code (code.h).
#include <gtest/gtest.h>

#include <stdexcept>

#include "code.h"

namespace cape::tr {
namespace {

TEST(Holes, FillsNamesAndBracedNames) {
  Holes h{{"sh", "cape_sh_3"}, {"tls", "static __thread "}, {"x", "v"}};
  EXPECT_EQ(h.fill("$sh.lo < $sh.hi"), "cape_sh_3.lo < cape_sh_3.hi");
  EXPECT_EQ(h.fill("${tls}__typeof__($x)"), "static __thread __typeof__(v)");
  EXPECT_EQ(h.fill("no holes {0, 0}"), "no holes {0, 0}");
}

TEST(Holes, ABlockHoleBringsItsOwnLines) {
  Holes h{{"calls", "  a();\n  b();\n"}, {"none", ""}};
  EXPECT_EQ(h.fill("{\n$calls\n$none\n  start();\n}\n"), "{\n  a();\n  b();\n  start();\n}\n");
  // Not alone on its line: the newline stays.
  EXPECT_EQ(h.fill("x $none\ny\n"), "x \ny\n");
}

TEST(Holes, ValuesAreNotScannedAgain) {
  Holes h{{"lb", "$ub"}, {"ub", "10"}};
  EXPECT_EQ(h.fill("$lb < $ub"), "$ub < 10");
}

TEST(Holes, SetReplacesAndWithCopies) {
  Holes h{{"x", "a"}};
  Holes g = h.with("x", "b").with("y", "c");
  h.set("x", "z");
  EXPECT_EQ(h.fill("$x"), "z");
  EXPECT_EQ(g.fill("$x$y"), "bc");
}

TEST(Holes, AHoleWithoutValueIsABug) {
  Holes h{{"x", "a"}};
  EXPECT_THROW(h.fill("$x $missing"), std::logic_error);
  EXPECT_THROW(h.fill("${x"), std::logic_error);
}

TEST(GenName, UniquePerConstructAndVariable) {
  EXPECT_EQ(gen_name("lb", 7), "cape_lb_7");
  EXPECT_EQ(gen_name("pv", 12, "sum"), "cape_pv_12_sum");
}

}  // namespace
}  // namespace cape::tr
