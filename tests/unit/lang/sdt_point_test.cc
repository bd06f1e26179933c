// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// %sdt_PROVIDER:NAME in a definition: perf probe's spelling and names, and
// the kernel's errors where it is written wrong.
#include <gtest/gtest.h>

#include "lang/definition.h"
#include "lang/format_definition.h"
#include "unit/lang/parse_ok.h"

namespace dprobe::lang {
namespace {

ErrorCode error_of(const std::string& line) {
  auto def = parse_definition(line, {arch::Isa::kX86_64});
  EXPECT_FALSE(def) << line;
  return def ? ErrorCode::kCount : def.error().code;
}

TEST(SdtPoint, NamedAsPerfProbeNamesIt) {
  const Definition def = test::parse_ok("p /usr/bin/python3.11:%sdt_python:function__entry");
  ASSERT_TRUE(def.sdt);
  EXPECT_EQ(def.sdt->provider, "python");
  EXPECT_EQ(def.sdt->name, "function__entry");
  EXPECT_FALSE(def.sdt->group_written);
  EXPECT_EQ(def.spec.point.target.object, "/usr/bin/python3.11");
  EXPECT_EQ(def.spec.event.group, "sdt_python");
  EXPECT_EQ(def.spec.event.name, "function__entry");
  EXPECT_FALSE(def.wildcard);
  EXPECT_EQ(def.symbol_column, std::string("p /usr/bin/python3.11:").size());
}

TEST(SdtPoint, TheExecutablesOwnAndNamedEvents) {
  Definition def = test::parse_ok("p:py/fe %sdt_python:function__entry");
  ASSERT_TRUE(def.sdt);
  EXPECT_TRUE(def.sdt->group_written);
  EXPECT_EQ(def.spec.point.target.object, "");
  EXPECT_EQ(def.spec.event.group, "py");
  EXPECT_EQ(def.spec.event.name, "fe");
  def = test::parse_ok("p:fe %sdt_python:function__entry");
  EXPECT_EQ(def.spec.event.group, "sdt_python");
}

TEST(SdtPoint, ArgumentsAreTheOperandsWhereverThePointIs) {
  const Definition def = test::parse_ok("p x:%sdt_p:n $arg1 file=+0($arg2):string $arg3:s16 $arg*");
  ASSERT_EQ(def.spec.event.args.size(), 4u);
  EXPECT_EQ(def.spec.event.args[0].code[0].op, trace::FetchOp::kArg);
  EXPECT_FALSE(def.spec.event.args[0].type_written);
  EXPECT_TRUE(def.spec.event.args[2].type_written);
  EXPECT_EQ(def.spec.event.args[3].source_expr, "$arg*");
}

TEST(SdtPoint, WildcardsNameNoEvent) {
  const Definition def = test::parse_ok("p x:%sdt_*:gc__*");
  EXPECT_TRUE(def.wildcard);
  EXPECT_EQ(error_of("p:one x:%sdt_python:*"), ErrorCode::WILDCARD_EVENT);
}

TEST(SdtPoint, WrittenWrong) {
  EXPECT_EQ(error_of("r x:%sdt_python:function__entry"), ErrorCode::BAD_RETPROBE);
  EXPECT_EQ(error_of("p x:%sdt_python:function__entry%return"), ErrorCode::BAD_RETPROBE);
  EXPECT_EQ(error_of("p x:%sdt_python"), ErrorCode::BAD_PROBE_ADDR);
  EXPECT_EQ(error_of("p x:%sdt_:name"), ErrorCode::BAD_PROBE_ADDR);
  EXPECT_EQ(error_of("p x:%sdt_python:"), ErrorCode::BAD_PROBE_ADDR);
  EXPECT_EQ(error_of("p x:%sdt_py-thon:n"), ErrorCode::BAD_PROBE_ADDR);
  // No identifier (the fuzzer's: it would name the event "8rn").
  EXPECT_EQ(error_of("p %sdt_333dt_n:8rn"), ErrorCode::BAD_PROBE_ADDR);
  // A name longer than an event's may be (the fuzzer's).
  EXPECT_EQ(error_of("p %sdt__n:" + std::string(64, 'y')), ErrorCode::EVENT_TOO_LONG);
  EXPECT_EQ(error_of("p :%sdt_python:n"), ErrorCode::BAD_PROBE_ADDR);
  // Not an SDT point: the kernel's suffix error, as before.
  EXPECT_EQ(error_of("p x:f%sdt_python:n"), ErrorCode::BAD_ADDR_SUFFIX);
}

TEST(SdtPoint, PrintsBackAsWritten) {
  for (const char* line : {"p:sdt_python/line /usr/bin/python3.11:%sdt_python:line",
                           "p:g/e x:%sdt_a:b arg1=$arg1:x64"}) {
    const Definition def = test::parse_ok(line);
    const std::string printed = format_definition(def.spec);
    EXPECT_EQ(printed, line);
    const Definition again = test::parse_ok(printed);
    EXPECT_EQ(format_definition(again.spec), printed);
  }
}

}  // namespace
}  // namespace dprobe::lang
