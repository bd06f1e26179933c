// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --stacktrace on tests/programs/analysis.c, built without frame pointers
// (the stacks are unwound through .eh_frame alone): each stack compared
// frame by frame with gdb's `bt` at the same address (function, offset,
// object), at -O0 and -O2; the --json "stack" array; return probes' stubs
// on the stack never shown, the real return address in their place;
// stacks from several threads; the same stacks from optimized probes and
// from breakpoints; an unwind bounded at 16 frames.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "integration/analysis_support.h"
#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using analysis::analysis_name;
using analysis::analysis_path;
using analysis::frame_name;
using analysis::parse_stacked;
using analysis::program_finished;
using analysis::StackedLine;
using analysis::StackFrame;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr size_t kMaxFrames = 16;  // docs/analysis.md: an unwind stops at 16 frames

// The stacks of `event`'s lines, each checked to have its block.
std::vector<StackedLine> stacked_lines(const RunResult& run, const std::string& event) {
  std::vector<StackedLine> lines;
  for (StackedLine& line : parse_stacked(run.out)) {
    if (line.line.event != event) continue;
    EXPECT_TRUE(line.has_stack_header) << "no <user stack trace> line under " << line.line;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// What two runs agree on for a frame: the function and offset where it
// has one, else its object and its address within a page (the object's
// load address changes from run to run, never its page offset).
std::string comparable(const StackFrame& frame) {
  if (!frame.function.empty()) return frame_name(frame) + " (" + frame.object + ")";
  return "page offset " + hex(frame.address & 0xfff) + " (" + frame.object + ")";
}

std::vector<std::string> comparable(const std::vector<StackFrame>& stack) {
  std::vector<std::string> frames;
  for (const StackFrame& frame : stack) frames.push_back(comparable(frame));
  return frames;
}

std::vector<std::string> first_functions(const std::vector<StackFrame>& stack, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n && i < stack.size(); ++i) names.push_back(stack[i].function);
  return names;
}

// ---- gdb's view ---------------------------------------------------------------------

struct GdbFrame {
  std::string function;  // from `info symbol $pc`
  uint64_t offset = 0;
  std::string object;          // the file's base name
  std::optional<uint64_t> pc;  // from `bt` (frame 0 has none printed)
};

// gdb's frames at the first stop at `symbol`'s first instruction (as the
// probe is placed), from `bt` and `info symbol $pc` in each frame; empty
// if gdb did not stop there.
std::vector<GdbFrame> gdb_frames(const std::string& gdb, const std::string& path,
                                 const std::string& symbol) {
  std::vector<std::string> args{gdb,
                                "-batch",
                                "-nx",
                                "-ex",
                                "set debuginfod enabled off",
                                "-ex",
                                "set pagination off",
                                "-ex",
                                "break *" + symbol,
                                "-ex",
                                "run",
                                "-ex",
                                "bt"};
  for (int i = 0; i < 40; ++i) {
    args.insert(args.end(), {"-ex", "frame " + std::to_string(i), "-ex", "info symbol $pc"});
  }
  args.push_back(path);
  const RunResult run = run_program(args);
  std::vector<GdbFrame> frames;
  std::map<size_t, uint64_t> pcs;
  size_t depth = 0;  // the frames `bt` shows
  static const std::regex bt_line(R"(^#(\d+) +(?:0x([0-9a-f]+) in )?.*)");
  static const std::regex symbol_line(R"(^(\S+)(?: \+ (\d+))? in section \S+(?: of (\S+))?$)");
  std::istringstream lines(run.out);
  bool in_bt = true;
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, symbol_line)) {
      in_bt = false;
      GdbFrame frame;
      frame.function = match[1];
      frame.offset = match[2].matched ? std::stoull(match[2]) : 0;
      frame.object = match[3].matched ? basename_of(match[3]) : basename_of(path);
      frames.push_back(frame);
    } else if (in_bt && std::regex_match(line, match, bt_line)) {
      depth = std::max(depth, std::stoul(match[1]) + 1);
      if (match[2].matched) pcs[std::stoul(match[1])] = std::stoull(match[2], nullptr, 16);
    }
  }
  // Past the outermost frame, `frame N` fails and `info symbol` repeats
  // the last frame's.
  if (frames.size() > depth) frames.resize(depth);
  for (const auto& [index, pc] : pcs) {
    if (index < frames.size()) frames[index].pc = pc;
  }
  return frames;
}

class AnalysisStack : public ::testing::TestWithParam<const char*> {
 protected:
  std::string level() const { return GetParam(); }
  std::string name() const { return analysis_name(level()); }
  std::string path() const { return analysis_path(level()); }
  std::string leaf_probe() const { return "p:a/leaf " + name() + ":leaf d=%di:s32"; }

  RunResult run_leaf(const std::vector<std::string>& more_definitions,
                     const std::vector<std::string>& options, int threads = 1) const {
    std::vector<std::string> definitions{leaf_probe()};
    definitions.insert(definitions.end(), more_definitions.begin(), more_definitions.end());
    std::vector<std::string> all_options{"--stacktrace", "a/leaf"};
    all_options.insert(all_options.end(), options.begin(), options.end());
    RunResult run = run_traced(definitions, {path(), std::to_string(threads)}, all_options);
    EXPECT_EQ(run.status, 0) << run;
    EXPECT_TRUE(program_finished(run)) << run;
    return run;
  }

  // leaf's stack through the chain: leaf, level1, level2, level3, work,
  // each in the program, the first at leaf's first byte.
  void expect_chain(const std::vector<StackFrame>& stack) const {
    EXPECT_THAT(first_functions(stack, 5),
                ElementsAre("leaf", "level1", "level2", "level3", "work"))
        << ::testing::PrintToString(stack);
    for (size_t i = 0; i < 5 && i < stack.size(); ++i)
      EXPECT_EQ(stack[i].object, name()) << stack[i];
    if (!stack.empty()) EXPECT_EQ(stack[0].offset, 0u) << stack[0];
  }
};

// Frame by frame what gdb's `bt` shows at the same address: the same
// number of frames, the program's frames with the same function and
// offset, the C library's in the same object at the same page offset (or
// the same function, where dprobe names it).
// The agent stands between the program and some C library functions
// (syscall(), sigaction(): agent/interpose.cc); that is dprobe's work, not
// the program's, and a stack shows the program calling the C library.
TEST(AnalysisStackOwnFrames, TheAgentsInterposersAreNoFramesOfTheProgram) {
  const std::string prog = program("syscall_calls_O2");
  const RunResult run = run_traced({"p:own/sys libc.so.6:syscall nr=%di:u64"},
                                   {prog, "getppid", "3"}, {"--stacktrace", "own/sys"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<StackedLine> lines = stacked_lines(run, "sys");
  ASSERT_GE(lines.size(), 3u) << run;
  for (const StackedLine& line : lines) {
    ASSERT_GE(line.stack.size(), 2u) << run;
    EXPECT_EQ(line.stack[0].object, "libc.so.6") << line.stack[0];
    EXPECT_EQ(line.stack[1].object, "syscall_calls_O2") << line.stack[1];
    for (const StackFrame& frame : line.stack) {
      EXPECT_NE(frame.object, "libdprobe_agent.so") << frame;
    }
  }
}

TEST_P(AnalysisStack, SameFramesAsGdb) {
  const std::string gdb = find_tool("gdb");
  if (gdb.empty()) GTEST_SKIP() << "gdb is not installed: nothing to compare the stacks with";
  const std::vector<GdbFrame> expected = gdb_frames(gdb, path(), "leaf");
  ASSERT_GE(expected.size(), 5u) << "gdb did not stop in leaf";
  ASSERT_EQ(expected[0].function, "leaf");

  const RunResult run = run_leaf({}, {});
  const std::vector<StackedLine> lines = stacked_lines(run, "leaf");
  ASSERT_EQ(lines.size(), analysis::kLeafCallsPerThread) << run;
  const std::vector<StackFrame>& stack = lines[0].stack;  // the first call, where gdb stopped
  expect_chain(stack);
  ASSERT_EQ(stack.size(), expected.size()) << run.out;
  for (size_t i = 0; i < stack.size(); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i) + ": " + stack[i].text);
    EXPECT_EQ(stack[i].object, expected[i].object);
    if (!stack[i].function.empty() || expected[i].object == name()) {
      EXPECT_EQ(stack[i].function, expected[i].function);
      EXPECT_EQ(stack[i].offset, expected[i].offset);
    } else {
      ASSERT_TRUE(expected[i].pc) << "no pc from gdb's bt";
      EXPECT_EQ(stack[i].address & 0xfff, *expected[i].pc & 0xfff);
    }
  }
}

// A stack deeper than the bound: exactly 16 frames, the first 16 gdb shows.
TEST_P(AnalysisStack, BoundedAtSixteenFrames) {
  const RunResult run =
      run_traced({"p:a/bottom " + name() + ":bottom"}, {path()}, {"--stacktrace", "a/bottom"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<StackedLine> lines = stacked_lines(run, "bottom");
  ASSERT_EQ(lines.size(), 1u) << run;
  const std::vector<StackFrame>& stack = lines[0].stack;
  ASSERT_EQ(stack.size(), kMaxFrames) << run.out;
  EXPECT_EQ(frame_name(stack[0]), "bottom+0x0");
  for (size_t i = 1; i < stack.size(); ++i) EXPECT_EQ(stack[i].function, "deep") << stack[i];
  const std::string gdb = find_tool("gdb");
  if (gdb.empty()) return;
  const std::vector<GdbFrame> expected = gdb_frames(gdb, path(), "bottom");
  ASSERT_GT(expected.size(), kMaxFrames);
  for (size_t i = 0; i < kMaxFrames; ++i) {
    EXPECT_EQ(stack[i].function, expected[i].function) << "frame " << i;
    EXPECT_EQ(stack[i].offset, expected[i].offset) << "frame " << i;
  }
}

// --json: a "stack" array of {ip, sym, object}, the same frames as the
// text; its first ip is the event's.
TEST_P(AnalysisStack, JsonStackArray) {
  const RunResult text = run_leaf({}, {});
  const std::vector<StackedLine> text_lines = stacked_lines(text, "leaf");
  ASSERT_EQ(text_lines.size(), analysis::kLeafCallsPerThread) << text;

  const RunResult json = run_leaf({}, {"--json"});
  static const std::regex frame_re(
      R"re(\{"ip":"(0x[0-9a-f]+)"(?:,"sym":"([^"]*)")?,"object":"([^"]*)"\})re");
  static const std::regex event_ip_re(R"re("event":"leaf","ip":"(0x[0-9a-f]+)")re");
  size_t n = 0;
  std::istringstream lines(json.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"event\":\"leaf\"") == std::string::npos) continue;
    SCOPED_TRACE(line);
    ASSERT_LT(n, text_lines.size());
    const size_t array = line.find("\"stack\":[");
    ASSERT_NE(array, std::string::npos);
    const std::string frames_text = line.substr(array, line.find(']', array) - array);
    std::vector<std::string> frames;
    std::vector<std::string> ips;
    for (auto it = std::sregex_iterator(frames_text.begin(), frames_text.end(), frame_re);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      ips.push_back(m[1]);
      StackFrame frame;
      frame.object = m[3];
      if (m[2].matched) {
        const std::string sym = m[2];
        frame.function = sym.substr(0, sym.rfind('+'));
        frame.offset = std::stoull(sym.substr(sym.rfind('+') + 1), nullptr, 16);
      } else {
        frame.address = std::stoull(m[1], nullptr, 16);
      }
      frames.push_back(comparable(frame));
    }
    EXPECT_EQ(frames, comparable(text_lines[n].stack));
    std::smatch event_ip;
    ASSERT_TRUE(std::regex_search(line, event_ip, event_ip_re));
    ASSERT_FALSE(ips.empty());
    EXPECT_EQ(ips[0], event_ip[1].str());
    ++n;
  }
  EXPECT_EQ(n, analysis::kLeafCallsPerThread) << json;
}

// Return probes on level1, level2 and level3 put a stub in place of each
// one's return address while leaf runs: the stacks are still the real
// ones, frame for frame, and nothing of dprobe's shows.
TEST_P(AnalysisStack, ReturnStubsAreNotFrames) {
  const RunResult plain = run_leaf({}, {});
  const RunResult stubbed =
      run_leaf({"r:a/r1 " + name() + ":level1", "r:a/r2 " + name() + ":level2",
                "r:a/r3 " + name() + ":level3"},
               {});
  for (const char* event : {"r1", "r2", "r3"}) {
    EXPECT_EQ(lines_of(parse_trace(stubbed.out), event).size(), analysis::kLeafCallsPerThread)
        << event << ": " << stubbed;
  }
  const std::vector<StackedLine> expected = stacked_lines(plain, "leaf");
  const std::vector<StackedLine> actual = stacked_lines(stubbed, "leaf");
  ASSERT_EQ(actual.size(), expected.size()) << stubbed;
  for (size_t i = 0; i < actual.size(); ++i) {
    expect_chain(actual[i].stack);
    EXPECT_EQ(comparable(actual[i].stack), comparable(expected[i].stack)) << "leaf call " << i;
    for (const StackFrame& frame : actual[i].stack) {
      EXPECT_TRUE(frame.object == name() || frame.object == "libc.so.6") << frame;
    }
  }
}

// Four threads, three calls each: every stack whole, each thread's three
// from the same call sites as every other thread's.
TEST_P(AnalysisStack, EveryThreadsStack) {
  constexpr int kThreads = 4;
  const RunResult run = run_leaf({}, {}, kThreads);
  const std::vector<StackedLine> lines = stacked_lines(run, "leaf");
  ASSERT_EQ(lines.size(), kThreads * analysis::kLeafCallsPerThread) << run;
  std::map<uint64_t, std::vector<std::vector<std::string>>> by_thread;
  for (const StackedLine& line : lines) {
    expect_chain(line.stack);
    by_thread[line.line.tid].push_back(comparable(line.stack));
  }
  ASSERT_EQ(by_thread.size(), size_t{kThreads});
  const auto& first = by_thread.begin()->second;
  for (const auto& [tid, stacks] : by_thread) EXPECT_EQ(stacks, first) << "thread " << tid;
}

// An optimized probe (a jump to a trampoline) and a breakpoint see the
// same stack.
TEST_P(AnalysisStack, OptimizedAndBreakpointProbesAgree) {
  const RunResult optimized = run_leaf({}, {"--probes"});
  const RunResult breakpoint = run_leaf({}, {"--probes", "--no-optimize"});
  EXPECT_THAT(breakpoint.err, HasSubstr("leaf+0x0/")) << breakpoint;
  EXPECT_THAT(breakpoint.err, HasSubstr("[BREAKPOINT")) << breakpoint;
  if (!breakpoints_only()) EXPECT_THAT(optimized.err, HasSubstr("[OPTIMIZED]")) << optimized;
  const std::vector<StackedLine> a = stacked_lines(optimized, "leaf");
  const std::vector<StackedLine> b = stacked_lines(breakpoint, "leaf");
  ASSERT_EQ(a.size(), analysis::kLeafCallsPerThread) << optimized;
  ASSERT_EQ(b.size(), a.size()) << breakpoint;
  for (size_t i = 0; i < a.size(); ++i) {
    expect_chain(a[i].stack);
    EXPECT_EQ(comparable(a[i].stack), comparable(b[i].stack)) << "leaf call " << i;
  }
}

// Only the events named get a stack.
TEST_P(AnalysisStack, OnlyTheNamedEvent) {
  const RunResult run = run_leaf({"p:a/l1 " + name() + ":level1"}, {});
  for (const StackedLine& line : parse_stacked(run.out)) {
    if (line.line.event == "l1") {
      EXPECT_FALSE(line.has_stack_header) << line.line;
      EXPECT_TRUE(line.stack.empty()) << line.line;
    }
  }
  EXPECT_EQ(lines_of(parse_trace(run.out), "l1").size(), analysis::kLeafCallsPerThread);
}

INSTANTIATE_TEST_SUITE_P(AnalysisLevels, AnalysisStack, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
