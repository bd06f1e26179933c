// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A C++ name with a space outside its brackets, as bpftrace takes it: in
// quotes, or with its qualifiers after the parameter list
// (lang/quoted_name.h).
#include <gtest/gtest.h>

#include <string>

#include "lang/definition.h"
#include "lang/format_definition.h"

namespace dprobe::lang {
namespace {

Definition parsed(const std::string& line) {
  auto def = parse_definition(line, ParseOptions{arch::Isa::kX86_64});
  EXPECT_TRUE(def.has_value()) << line << ": " << (def ? std::string() : render_error(def.error()));
  return def ? std::move(*def) : Definition{};
}

TEST(QuotedName, AConstMethodInQuotesOrNot) {
  for (const std::string line :
       {"p:g/a 'ns::K::v() const' x=%di", "p:g/a ns::K::v() const x=%di"}) {
    const Definition def = parsed(line);
    EXPECT_EQ(def.spec.point.target.symbol, "ns::K::v() const") << line;
    ASSERT_EQ(def.spec.event.args.size(), 1u) << line;
    EXPECT_EQ(def.spec.event.args[0].name, "x");
    EXPECT_EQ(format_definition(def.spec), "p:g/a 'ns::K::v() const' x=%di:x64")
        << "read back the same";
  }
}

TEST(QuotedName, AfterItsObject) {
  const Definition def = parsed("p:g/a app:'ns::K::v() const'");
  EXPECT_EQ(def.spec.point.target.object, "app");
  EXPECT_EQ(def.spec.point.target.symbol, "ns::K::v() const");
}

TEST(QuotedName, SpacesInsideTheParametersNeedNoQuotes) {
  const Definition def = parsed("p:g/a 'f(int a, int b)'");
  EXPECT_EQ(format_definition(def.spec), "p:g/a f(int a, int b)");
}

TEST(QuotedName, OnlyAQuotableNameIsOneWord) {
  for (const char* line : {"p 'a b'", "p 'a:b() c'"}) {
    EXPECT_FALSE(parse_definition(line, ParseOptions{arch::Isa::kX86_64}).has_value()) << line;
  }
}

}  // namespace
}  // namespace dprobe::lang
