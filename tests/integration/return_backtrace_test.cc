// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// In-process unwinders inside return-probed functions
// (tests/programs/ret_backtrace.c), at -O0 and -O2. With return probes on
// outer, probed_bt and inner_bt, up to three return addresses on the
// stack are return stubs when the program takes its backtraces; it must
// see the same frames (object + offset, printed by the program) as an
// unprobed run of the same binary: backtrace(3) exactly, also when the
// buffer it is given is shorter than the stack; libgcc's
// _Unwind_Backtrace at least the same real callers in the same order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

// "TAG: N frame..." lines of the program's output, by tag, in order.
std::multimap<std::string, std::string> backtraces(const std::string& out) {
  static const std::set<std::string> kTags = {"probed", "inner", "inner-4", "inner-2", "probed-3"};
  std::multimap<std::string, std::string> found;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(": ");
    if (colon != std::string::npos && kTags.contains(line.substr(0, colon))) {
      found.emplace(line.substr(0, colon), line.substr(colon + 2));
    }
  }
  return found;
}

std::vector<std::string> of_tag(const std::multimap<std::string, std::string>& all,
                                const std::string& tag) {
  std::vector<std::string> lines;
  const auto [begin, end] = all.equal_range(tag);
  for (auto it = begin; it != end; ++it) lines.push_back(it->second);
  return lines;
}

// The frames of "N frame frame ...", "?" (no object) left out.
std::vector<std::string> known_frames(const std::string& text) {
  std::istringstream words(text);
  std::string count;
  words >> count;
  std::vector<std::string> frames;
  for (std::string frame; words >> frame;) {
    if (frame != "?") frames.push_back(frame);
  }
  return frames;
}

class ReturnBacktrace : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_backtrace_") + GetParam()); }

  // The unprobed run and the probed run of `unwinder`, both passed.
  void run_both(const std::string& unwinder) {
    const RunResult plain = run_program({exe(), unwinder});
    ASSERT_EQ(plain.status, 0) << plain;
    ASSERT_THAT(plain.out, HasSubstr("backtrace: ok\n")) << plain;
    probed_ = run_traced({"r:b/outer outer rv=$retval:s64", "r:b/probed probed_bt rv=$retval:s64",
                          "r:b/inner inner_bt rv=$retval:s64"},
                         {exe(), unwinder}, {"--profile"});
    ASSERT_EQ(probed_.status, 0) << probed_;
    ASSERT_THAT(probed_.out, HasSubstr("backtrace: ok\n")) << probed_;
    // The probes were live: each function returned twice, traced.
    const auto lines = parse_trace(probed_.out);
    ASSERT_EQ(lines_of(lines, "outer").size(), 2u) << probed_;
    ASSERT_EQ(lines_of(lines, "probed").size(), 2u) << probed_;
    ASSERT_EQ(lines_of(lines, "inner").size(), 2u) << probed_;
    expected_ = backtraces(plain.out);
    actual_ = backtraces(probed_.out);
    ASSERT_EQ(expected_.size(), 10u) << plain;
  }

  RunResult probed_;
  std::multimap<std::string, std::string> expected_;
  std::multimap<std::string, std::string> actual_;
};

TEST_P(ReturnBacktrace, BacktraceSeesTheSameFramesAsUnprobed) {
  run_both("backtrace");
  for (const char* tag : {"probed", "inner"}) {
    EXPECT_EQ(of_tag(actual_, tag), of_tag(expected_, tag)) << tag;
  }
}

// backtrace(buffer, 4) from inner_bt: the four innermost frames, the
// same as unprobed, though two return stubs lie among them.
TEST_P(ReturnBacktrace, BacktraceIntoAShortBufferSeesTheSameFramesAsUnprobed) {
  run_both("backtrace");
  for (const char* tag : {"inner-4", "inner-2", "probed-3"}) {
    EXPECT_EQ(of_tag(actual_, tag), of_tag(expected_, tag)) << tag;
  }
}

TEST_P(ReturnBacktrace, UnwindBacktraceSeesTheRealCallersInOrder) {
  run_both("unwind");
  for (const char* tag : {"probed", "inner"}) {
    const auto actual = of_tag(actual_, tag);
    const auto expected = of_tag(expected_, tag);
    ASSERT_EQ(actual.size(), expected.size()) << tag;
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_EQ(known_frames(actual[i]), known_frames(expected[i])) << tag << " " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnBacktrace, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
