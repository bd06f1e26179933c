// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// f32 and f64 fetches (dprobe's own types: the kernel's tracer has none):
// the shortest decimal that reads back, in text lines and as JSON numbers
// (inf and nan, which JSON has no numbers for, as strings); no filter or
// hist takes them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dprobe_run.h"

namespace dprobe::integration {
namespace {

constexpr const char* kProbe = "p:fv/values float_values d=+0(%di):f64 f=+0(%si):f32";

TEST(FloatTypes, PrintTheShortestDecimalThatReadsBack) {
  const std::string prog = program("float_values_O0");
  const RunResult run = run_traced({kProbe}, {prog});
  ASSERT_EQ(run.status, 0) << run;
  std::vector<std::pair<std::string, std::string>> values;
  for (const TraceLine& line : parse_trace(run.out)) {
    if (line.event == "values") values.emplace_back(line.arg("d"), line.arg("f"));
  }
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"1.5", "0.25"}, {"-0.1", "3"}, {"1e+300", "-1e-30"}, {"inf", "-inf"}, {"nan", "2.5"}};
  EXPECT_EQ(values, expected) << run;
}

TEST(FloatTypes, JsonNumbersAndStringsForWhatJsonHasNoNumberFor) {
  const std::string prog = program("float_values_O0");
  const RunResult run = run_traced({kProbe}, {prog}, {"--json"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("\"d\":1.5,\"f\":0.25")) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("\"d\":\"inf\",\"f\":\"-inf\"")) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("\"d\":\"nan\",\"f\":2.5")) << run;
}

TEST(FloatTypes, NoFilterOrHistTakesThem) {
  const std::string prog = program("float_values_O0");
  const RunResult filtered = run_traced({kProbe}, {prog}, {"--filter", "fv/values:d > 1"});
  EXPECT_NE(filtered.status, 0) << filtered;
  const RunResult hist = run_traced({kProbe}, {prog}, {"--trigger", "fv/values:hist:keys=f"});
  EXPECT_NE(hist.status, 0) << hist;
}

}  // namespace
}  // namespace dprobe::integration
