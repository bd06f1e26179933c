// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "base/strings.h"

#include <gtest/gtest.h>

namespace dprobe {
namespace {

TEST(ParseNumber, BaseZeroLikeTheKernel) {
  EXPECT_EQ(parse_u64("10"), 10u);
  EXPECT_EQ(parse_u64("0x1f"), 31u);
  EXPECT_EQ(parse_u64("0X1F"), 31u);
  EXPECT_EQ(parse_u64("017"), 15u);
  EXPECT_EQ(parse_u64("0"), 0u);
  EXPECT_EQ(parse_u64("+5"), 5u);
  EXPECT_EQ(parse_u64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(parse_u64("18446744073709551616"));
  EXPECT_FALSE(parse_u64(""));
  EXPECT_FALSE(parse_u64("0x"));
  EXPECT_FALSE(parse_u64("08"));
  EXPECT_FALSE(parse_u64("12a"));
  EXPECT_FALSE(parse_u64("-1"));
}

TEST(ParseNumber, Signed) {
  EXPECT_EQ(parse_s64("-8"), -8);
  EXPECT_EQ(parse_s64("+0x10"), 16);
  EXPECT_EQ(parse_s64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(parse_s64("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(parse_s64("9223372036854775808"));
  EXPECT_FALSE(parse_s64("-"));
  EXPECT_FALSE(parse_s64("--1"));
}

TEST(Identifier, FollowsC) {
  EXPECT_TRUE(is_c_identifier("_a1"));
  EXPECT_TRUE(is_c_identifier("do_sys_open"));
  EXPECT_FALSE(is_c_identifier(""));
  EXPECT_FALSE(is_c_identifier("1a"));
  EXPECT_FALSE(is_c_identifier("a-b"));
  EXPECT_FALSE(is_c_identifier("a.b"));
}

TEST(SplitWords, KeepsPositions) {
  const auto words = split_words("  p:a/b\tfoo  x=%di ");
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].text, "p:a/b");
  EXPECT_EQ(words[0].position, 2u);
  EXPECT_EQ(words[1].text, "foo");
  EXPECT_EQ(words[1].position, 8u);
  EXPECT_EQ(words[2].text, "x=%di");
  EXPECT_TRUE(split_words(" \t ").empty());
}

TEST(Glob, StarAndQuestionMark) {
  EXPECT_TRUE(glob_match("str*cmp", "strcmp"));
  EXPECT_TRUE(glob_match("str*cmp", "strncasecmp"));
  EXPECT_FALSE(glob_match("str*cmp", "strcmpx"));
  EXPECT_TRUE(glob_match("mem?py", "memcpy"));
  EXPECT_FALSE(glob_match("mem?py", "mempy"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("**a**", "bab"));
  EXPECT_FALSE(glob_match("a", "b"));
  EXPECT_TRUE(has_wildcard("a*"));
  EXPECT_FALSE(has_wildcard("abc"));
}

TEST(EditDistance, CountsEditsUpToTheLimit) {
  EXPECT_EQ(edit_distance("malloc", "malloc", 2), 0u);
  EXPECT_EQ(edit_distance("mallocc", "malloc", 2), 1u);
  EXPECT_EQ(edit_distance("malloc", "calloc", 2), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 3), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting", 2), 3u);  // over the limit: limit + 1
  EXPECT_EQ(edit_distance("a", "abcdef", 2), 3u);        // lengths alone too far apart
  EXPECT_EQ(edit_distance("", "ab", 2), 2u);
}

TEST(Trim, BothEnds) {
  EXPECT_EQ(trim("  a b \t\n"), "a b");
  EXPECT_EQ(trim(""), "");
}

}  // namespace
}  // namespace dprobe
