// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source places and source variables end to end (issue 14, items 1 and 2):
// `dprobe run` with probes named by line and function, fetching variables
// by name, on tests/programs/dwarf_vars.c and dwarf_cxx.cc at -O0 and -O2.
// The values are the ones the programs are known to hold; gdb is the
// oracle of the same on more programs (tests/oracle/dwarf_values.sh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

// One argument's values over the hits, in order.
std::vector<std::string> values_of(const std::vector<TraceLine>& hits, const std::string& arg) {
  std::vector<std::string> out;
  for (const TraceLine& line : hits) out.push_back(line.arg(arg));
  return out;
}

class DwarfVars : public ::testing::TestWithParam<const char*> {
 protected:
  std::string binary() const { return program(std::string("dwarf_vars_") + GetParam()); }
};

TEST_P(DwarfVars, MembersThroughPointersOfARecursiveFunction) {
  const RunResult run =
      run_dprobe({"run", "-e", "p:t/v visit it->id it->name it->pos.y it->flags it->level depth",
                  "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> hits = lines_of(parse_trace(run.out), "v");
  ASSERT_EQ(hits.size(), 3u) << run.out;
  EXPECT_THAT(values_of(hits, "it_id"), ElementsAre("1", "2", "3"));
  EXPECT_THAT(values_of(hits, "it_name"), ElementsAre("\"first\"", "\"second\"", "\"third\""));
  EXPECT_THAT(values_of(hits, "it_pos_y"), ElementsAre("0", "-7", "-14"));
  EXPECT_THAT(values_of(hits, "it_flags"), ElementsAre("5", "6", "7"));  // a 3-bit field
  EXPECT_THAT(values_of(hits, "it_level"), ElementsAre("20", "21", "22"));
  EXPECT_THAT(values_of(hits, "depth"), ElementsAre("0", "1", "2"));
  // Past the prologue, as gdb's `break visit`.
  EXPECT_THAT(hits[0].location, testing::Not(StartsWith("visit+0x0/"))) << hits[0];
}

TEST_P(DwarfVars, ArraysCharArraysAndGlobals) {
  const RunResult run =
      run_dprobe({"run", "-e", "p:t/g visit it->tag it->scores visits greeting table table[2]",
                  "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> hits = lines_of(parse_trace(run.out), "g");
  ASSERT_EQ(hits.size(), 3u) << run.out;
  EXPECT_THAT(values_of(hits, "it_tag"), ElementsAre("\"tag0\"", "\"tag1\"", "\"tag2\""));
  EXPECT_EQ(hits[1].arg("it_scores"), "{100,99,98,97}");
  EXPECT_THAT(values_of(hits, "visits"), ElementsAre("0", "1", "2"));
  EXPECT_EQ(hits[0].arg("greeting"), "\"hello\"");
  EXPECT_EQ(hits[0].arg("table"), "{10,20,30}");
  EXPECT_EQ(hits[0].arg("table_2"), "30");
}

TEST_P(DwarfVars, ALoopLineHitOncePerIteration) {
  // dwarf_vars.c:58, `total += values[i];`, and the same line as sum:3.
  const RunResult run = run_dprobe({"run", "-e", "p:t/l dwarf_vars.c:58 i total", "-e",
                                    "p:t/r sum:3 v=values[1]", "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> trace = parse_trace(run.out);
  std::vector<TraceLine> line;
  for (const TraceLine& hit : trace) {
    if (hit.event.starts_with("l")) line.push_back(hit);
  }
  ASSERT_EQ(line.size(), 3u) << run.out;
  EXPECT_THAT(values_of(line, "i"), ElementsAre("0", "1", "2"));
  EXPECT_THAT(values_of(line, "total"), ElementsAre("0", "10", "30"));
  std::vector<TraceLine> same;
  for (const TraceLine& hit : trace) {
    if (hit.event.starts_with("r")) same.push_back(hit);
  }
  ASSERT_EQ(same.size(), 3u) << run.out;
  EXPECT_THAT(values_of(same, "v"), ElementsAre("20", "20", "20"));
}

TEST_P(DwarfVars, AnInlinedFunctionGetsEveryCopy) {
  const RunResult run = run_dprobe({"run", "-e", "p:t/w weigh n->id n->pos.x", "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  std::vector<TraceLine> hits;
  for (const TraceLine& hit : parse_trace(run.out)) {
    if (hit.event.starts_with("w")) hits.push_back(hit);
  }
  ASSERT_EQ(hits.size(), 3u) << run.out;
  EXPECT_THAT(values_of(hits, "n_id"), ElementsAre("1", "2", "3"));
  EXPECT_THAT(values_of(hits, "n_pos_x"), ElementsAre("0", "10", "20"));
  EXPECT_THAT(hits[0].location, StartsWith("visit+"));  // weigh has no code of its own
}

TEST_P(DwarfVars, ParamsAreEachAnArgument) {
  const RunResult run = run_dprobe({"run", "-e", "p:t/s sum $params", "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> hits = lines_of(parse_trace(run.out), "s");
  ASSERT_EQ(hits.size(), 1u) << run.out;
  EXPECT_EQ(hits[0].arg("count"), "3");
  EXPECT_THAT(hits[0].arg("values"), StartsWith("0x"));
}

INSTANTIATE_TEST_SUITE_P(Levels, DwarfVars, ::testing::Values("O0", "O2"));

class DwarfCxx : public ::testing::TestWithParam<const char*> {
 protected:
  std::string binary() const { return program(std::string("dwarf_cxx_") + GetParam()); }
};

TEST_P(DwarfCxx, MembersThroughThisABaseAndReferences) {
  const RunResult run = run_dprobe(
      {"run", "-e", "p:t/b shapes::Counter::bump(int) by this->count_ this->name this->serial",
       "-e", "p:t/u shapes::unbox<long> box.value box.uses fallback", "--", binary()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<TraceLine> trace = parse_trace(run.out);
  const std::vector<TraceLine> bumps = lines_of(trace, "b");
  const std::vector<TraceLine> unboxes = lines_of(trace, "u");
  ASSERT_EQ(bumps.size(), 3u) << run.out;
  ASSERT_EQ(unboxes.size(), 3u) << run.out;
  EXPECT_THAT(values_of(bumps, "by"), ElementsAre("1", "2", "3"));
  EXPECT_THAT(values_of(bumps, "this_count_"), ElementsAre("0", "1", "3"));
  EXPECT_THAT(values_of(bumps, "this_name"), ElementsAre("\"clicks\"", "\"clicks\"", "\"clicks\""));
  EXPECT_THAT(values_of(bumps, "this_serial"), ElementsAre("7", "7", "7"));
  EXPECT_THAT(values_of(unboxes, "box_value"), ElementsAre("40", "40", "40"));
  EXPECT_THAT(values_of(unboxes, "box_uses"), ElementsAre("0", "1", "2"));
  EXPECT_THAT(values_of(unboxes, "fallback"), ElementsAre("2", "2", "2"));  // a const long&
  EXPECT_THAT(bumps[0].location, StartsWith("shapes::Counter::bump(int)+0x"));
}

INSTANTIATE_TEST_SUITE_P(Levels, DwarfCxx, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
