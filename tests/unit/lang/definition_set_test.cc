// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/definition_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace dprobe::lang {
namespace {

Result<void, ProbeError> apply(DefinitionSet& set, const std::string& line) {
  auto def = parse_definition(line);
  EXPECT_TRUE(def) << line;
  if (!def) return unexpected(def.error());
  return set.apply(std::move(*def));
}

std::vector<std::string> names(const DefinitionSet& set) {
  std::vector<std::string> out;
  for (const auto& spec : set.specs()) out.push_back(spec.event.group + "/" + spec.event.name);
  return out;
}

TEST(DefinitionSet, AssignsIdsInOrder) {
  DefinitionSet set;
  ASSERT_TRUE(apply(set, "p libc.so.6:malloc"));
  ASSERT_TRUE(apply(set, "p libc.so.6:free"));
  EXPECT_EQ(set.specs()[0].event.id, 1);
  EXPECT_EQ(set.specs()[1].event.id, 2);
}

TEST(DefinitionSet, SameNameTwiceIsAnError) {
  DefinitionSet set;
  ASSERT_TRUE(apply(set, "p:g/ev libc.so.6:malloc"));
  auto other = apply(set, "p:g/ev libc.so.6:free");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::EVENT_EXIST);
  EXPECT_EQ(other.error().column, 4u);
  auto same = apply(set, "p:g/ev libc.so.6:malloc");
  ASSERT_FALSE(same);
  EXPECT_EQ(same.error().code, ErrorCode::SAME_PROBE);
  // The same name in another group is another event.
  EXPECT_TRUE(apply(set, "p:h/ev libc.so.6:malloc"));
}

TEST(DefinitionSet, RemovalByEventGroupOrBoth) {
  DefinitionSet set;
  for (const char* line : {"p:a/x libc.so.6:malloc", "p:a/y libc.so.6:free", "p:b/x libc.so.6:open",
                           "p:b/z libc.so.6:read"}) {
    ASSERT_TRUE(apply(set, line));
  }
  ASSERT_TRUE(apply(set, "-:x"));  // x in every group
  EXPECT_EQ(names(set), (std::vector<std::string>{"a/y", "b/z"}));
  ASSERT_TRUE(apply(set, "-:b/"));  // all of group b
  EXPECT_EQ(names(set), (std::vector<std::string>{"a/y"}));
  auto nothing = apply(set, "-:a/nothing");
  ASSERT_FALSE(nothing);
  EXPECT_EQ(nothing.error().code, ErrorCode::NO_SUCH_EVENT);
  ASSERT_TRUE(apply(set, "-:a/y"));
  EXPECT_TRUE(set.empty());
  // A removed name can be used again.
  EXPECT_TRUE(apply(set, "p:a/y libc.so.6:open"));
}

class DefinitionFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/dprobe-defs-XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = name;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void write(const std::string& text) { std::ofstream(path_) << text; }
  std::string path_;
};

TEST_F(DefinitionFileTest, SkipsCommentsAndBlankLines) {
  write(
      "# probes for malloc\n"
      "\n"
      "p libc.so.6:malloc size=%di   # the size\n"
      "   \t\n"
      "r libc.so.6:malloc $retval\n"
      "p libc.so.6:open \\\"a#b\"\n");
  auto lines = read_definition_file(path_);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].text, "p libc.so.6:malloc size=%di");
  EXPECT_EQ((*lines)[0].origin, path_ + ":3");
  EXPECT_EQ((*lines)[1].text, "r libc.so.6:malloc $retval");
  EXPECT_EQ((*lines)[1].origin, path_ + ":5");
  // A '#' inside a word is not a comment.
  EXPECT_EQ((*lines)[2].text, "p libc.so.6:open \\\"a#b\"");
}

TEST_F(DefinitionFileTest, MissingFileIsAnError) {
  auto lines = read_definition_file(path_ + ".missing");
  ASSERT_FALSE(lines);
  EXPECT_NE(lines.error().message.find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace dprobe::lang
