// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent takes itself out of the program's environment block
// (agent/environment.h): what stays is the program's own, in order.
#include "agent/environment.h"

#include <gtest/gtest.h>

#include <string>

namespace dprobe::agent {
namespace {

const std::string kAgent = "/opt/dprobe/lib/libdprobe_agent.so";

TEST(PreloadWithout, TheAgentGoesTheOthersStayInOrder) {
  EXPECT_EQ(preload_without(kAgent, kAgent), "");
  EXPECT_EQ(preload_without(kAgent + ":libm.so.6", kAgent), "libm.so.6");
  EXPECT_EQ(preload_without("a.so " + kAgent + ":b.so", kAgent), "a.so:b.so");
  EXPECT_EQ(preload_without(kAgent + "::" + kAgent, kAgent), "");
}

// The block as the kernel lays it out, packed; returns what it holds then.
std::string packed(std::string block, const std::string& kept) {
  size_t used = 0;
  const auto moved = pack_environment(block.data(), block.data() + block.size(), kept, used);
  EXPECT_EQ(block.substr(used), std::string(block.size() - used, '\0')) << "the rest is zeroed";
  for (const MovedEntry& move : moved) {
    EXPECT_GE(move.to, block.data());
    EXPECT_LT(move.to, block.data() + used);
  }
  return block.substr(0, used);
}

TEST(PackEnvironment, OnlyTheAgentsEntriesGo) {
  using namespace std::string_literals;
  EXPECT_EQ(packed("LD_PRELOAD=x\0DPROBE_CONTROL=/s\0DPROBE_FOLLOW=0\0"s, ""), "");
  EXPECT_EQ(packed("A=1\0LD_PRELOAD=x\0B=two\0DPROBE_CONTROL=/s\0"s, ""), "A=1\0B=two\0"s);
  EXPECT_EQ(packed("DPROBE_OTHER=1\0DPROBE_CONTROL=/s\0"s, ""), "DPROBE_OTHER=1\0"s);
}

TEST(PackEnvironment, TheUsersPreloadStaysWhereItWas) {
  using namespace std::string_literals;
  EXPECT_EQ(packed("A=1\0LD_PRELOAD=agent.so:libm.so.6\0B=2\0DPROBE_CONTROL=/s\0"s, "libm.so.6"),
            "A=1\0LD_PRELOAD=libm.so.6\0B=2\0"s);
}

TEST(PackEnvironment, EachKeptStringIsFoundWhereItWent) {
  using namespace std::string_literals;
  std::string block = "LD_PRELOAD=x\0A=1\0B=two\0"s;
  const char* a = block.data() + 13;
  const char* b = block.data() + 17;
  size_t used = 0;
  const auto moved = pack_environment(block.data(), block.data() + block.size(), "", used);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].from, a);
  EXPECT_EQ(std::string(moved[0].to), "A=1");
  EXPECT_EQ(moved[1].from, b);
  EXPECT_EQ(std::string(moved[1].to), "B=two");
}

}  // namespace
}  // namespace dprobe::agent
