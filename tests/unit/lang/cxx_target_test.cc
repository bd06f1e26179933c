// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ names as probe targets: where OBJ ends, where an offset starts, the
// spaces a parameter list keeps, and the default event names.
#include <gtest/gtest.h>

#include "lang/definition.h"
#include "lang/target.h"
#include "unit/lang/parse_ok.h"

namespace dprobe::lang {
namespace {

using test::parse_ok;

TEST(CxxTarget, QualifiedNamesWithAndWithoutObjects) {
  const Definition def = parse_ok("p ns::Klass::method(int)");
  const core::ProbeTarget& t = def.spec.point.target;
  EXPECT_EQ(t.kind, core::TargetKind::kSymbol);
  EXPECT_EQ(t.object, "");
  EXPECT_EQ(t.symbol, "ns::Klass::method(int)");
  EXPECT_EQ(t.offset, 0);
  EXPECT_EQ(def.spec.event.name, "p_method_int_0");

  const Definition with_object = parse_ok("p libfoo.so:ns::f(int)+0x10");
  EXPECT_EQ(with_object.spec.point.target.object, "libfoo.so");
  EXPECT_EQ(with_object.spec.point.target.symbol, "ns::f(int)");
  EXPECT_EQ(with_object.spec.point.target.offset, 16);
  EXPECT_EQ(with_object.symbol_column, 12u);
  EXPECT_EQ(with_object.spec.event.name, "p_f_int_16");

  EXPECT_EQ(parse_ok("p /opt/a:b/prog:ns::f").spec.point.target.object, "/opt/a:b/prog");
  EXPECT_EQ(parse_ok("p (anonymous namespace)::g()").spec.point.target.symbol,
            "(anonymous namespace)::g()");
  EXPECT_EQ(parse_ok("p f(int)").spec.point.target.symbol, "f(int)");
}

TEST(CxxTarget, OperatorsKeepTheirSigns) {
  EXPECT_EQ(parse_ok("p ns::operator-").spec.point.target.symbol, "ns::operator-");
  EXPECT_EQ(parse_ok("p ns::operator-").spec.point.target.offset, 0);
  const Definition plus = parse_ok("p ns::operator+(ns::V,ns::V)+4");
  EXPECT_EQ(plus.spec.point.target.symbol, "ns::operator+(ns::V,ns::V)");
  EXPECT_EQ(plus.spec.point.target.offset, 4);
  EXPECT_EQ(plus.spec.event.name, "p_operator_ns_V_ns_V_4");
  EXPECT_EQ(parse_ok("p ns::g<-1>(int)").spec.point.target.symbol, "ns::g<-1>(int)");
  EXPECT_EQ(parse_ok("p ns::K::operator%(int)").spec.point.target.symbol, "ns::K::operator%(int)");
}

// Found by the parser fuzzer: a name that itself ends in +N would print
// back as another target.
TEST(CxxTarget, ANameEndingInAnOffsetIsRefused) {
  const auto def = parse_definition("p ns::f+1+2");
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().code, ErrorCode::BAD_PROBE_ADDR);
  EXPECT_EQ(parse_ok("p ns::f+2").spec.point.target.offset, 2);
  const auto in_return = parse_definition("p ns::f(int)%return+4");
  ASSERT_FALSE(in_return);
  EXPECT_EQ(in_return.error().code, ErrorCode::BAD_PROBE_ADDR);
  EXPECT_FALSE(parse_definition("p ns::f(int)%return%return"));
}

TEST(CxxTarget, ReturnSuffix) {
  const Definition def = parse_ok("p ns::f(double)%return");
  EXPECT_TRUE(def.spec.point.is_return);
  EXPECT_EQ(def.spec.point.target.symbol, "ns::f(double)");
  EXPECT_EQ(def.spec.event.name, "r_f_double_0");
}

TEST(CxxTarget, ParameterListsKeepTheirSpaces) {
  const Definition def = parse_ok("p:grp/ev ns::f(int, char const*) x=%di y=%si");
  EXPECT_EQ(def.spec.point.target.symbol, "ns::f(int, char const*)");
  ASSERT_EQ(def.spec.event.args.size(), 2u);
  EXPECT_EQ(def.spec.event.args[0].name, "x");
  EXPECT_EQ(def.command, "p:grp/ev ns::f(int, char const*) x=%di y=%si");
  EXPECT_EQ(def.arg_columns[0], 33u);
  EXPECT_EQ(parse_ok("p ns::h<std::pair<int, long> >").spec.point.target.symbol,
            "ns::h<std::pair<int, long> >");
  EXPECT_EQ(parse_ok("p ns::f(int, long)").spec.event.name, "p_f_int_long_0");
  // An unclosed list stays cut: the rest are arguments, as before.
  EXPECT_EQ(parse_ok("p ns::f(int, x=%di").spec.point.target.symbol, "ns::f(int,");
  // Pointers and operators are not wildcards.
  EXPECT_FALSE(parse_ok("p ns::operator*(ns::V, int*)").wildcard);
  EXPECT_FALSE(parse_ok("p ns::g<int*>").wildcard);
  EXPECT_TRUE(parse_ok("p ns::g*").wildcard);
}

TEST(CxxTarget, WildcardsAndPlainNamesAreUnchanged) {
  const Definition def = parse_ok("p prog:ns::*");
  EXPECT_TRUE(def.wildcard);
  EXPECT_EQ(def.spec.point.target.object, "prog");
  EXPECT_EQ(def.spec.point.target.symbol, "ns::*");
  EXPECT_EQ(parse_ok("p a:b:malloc").spec.point.target.object, "a:b");
  EXPECT_EQ(parse_ok("p _ZN2ns1fEi").spec.event.name, "p__ZN2ns1fEi_0");
  EXPECT_EQ(object_separator("prog:ns::f(int)"), 4u);
  EXPECT_EQ(object_separator("ns::f(a:b)"), std::string_view::npos);
}

}  // namespace
}  // namespace dprobe::lang
