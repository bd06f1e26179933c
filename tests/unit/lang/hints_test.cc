// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's error, then what a user of another tool meant
// (lang/hints.h): a register by its full x86_64 name, a type by its C name,
// a probe without its type, $arg0.
#include <gtest/gtest.h>

#include <string>

#include "lang/definition.h"

namespace dprobe::lang {
namespace {

// The error's detail line for `line` parsed for `isa`.
std::string hint(const std::string& line, arch::Isa isa = arch::Isa::kX86_64) {
  auto parsed = parse_definition(line, ParseOptions{isa});
  EXPECT_FALSE(parsed.has_value()) << line;
  return parsed ? std::string() : parsed.error().detail;
}

TEST(Hints, RegistersByTheirFullNames) {
  EXPECT_EQ(hint("p:g/e f a=%rdi"), "the kernel's name for %rdi is %di");
  EXPECT_EQ(hint("p:g/e f a=%rip"), "the kernel's name for %rip is %ip");
  EXPECT_EQ(hint("p:g/e f a=%esi"),
            "the kernel's name for %esi is %si with a 32-bit type: %si:u32 or :s32");
  EXPECT_EQ(hint("p:g/e f a=%xyz"), "") << "no guess for a name that is no register";
  EXPECT_EQ(hint("p:g/e f a=%rdi", arch::Isa::kArm64), "") << "x86_64's names only";
}

TEST(Hints, TypesByTheirCNames) {
  EXPECT_EQ(hint("p:g/e f a=%di:int"), "did you mean :s32?");
  EXPECT_EQ(hint("p:g/e f a=+0(%di):str"), "did you mean :string?");
  EXPECT_EQ(hint("p:g/e f a=%di:ptr"), "did you mean :x64?");
  EXPECT_EQ(hint("p:g/e f a=%di:quux"), "");
}

TEST(Hints, AProbeWithoutItsType) {
  EXPECT_EQ(hint("compute%return"), "a return probe: 'r compute' (or 'p compute%return')");
  EXPECT_EQ(hint("app:compute%return rv=$retval"),
            "a return probe: 'r app:compute rv=$retval' (or 'p app:compute%return rv=$retval')");
  EXPECT_EQ(hint("malloc size=%di"), "an entry probe: 'p malloc size=%di'");
  EXPECT_EQ(hint("x:g/e f"), "") << "a letter that is no type, with an event: no guess";
  EXPECT_EQ(hint("x st_step"), "") << "a letter that is no type, then the place: no guess";
}

TEST(Hints, ArgumentsCountFromOne) {
  EXPECT_EQ(hint("p:g/e f a=$arg0"), "arguments count from $arg1, the first (as the kernel's)");
}

TEST(Hints, TheKernelsErrorStaysAsItIs) {
  auto parsed = parse_definition("p:g/e f a=%rdi", ParseOptions{arch::Isa::kX86_64});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code, ErrorCode::BAD_REG_NAME);
  EXPECT_EQ(parsed.error().column, 10u);
}

}  // namespace
}  // namespace dprobe::lang
