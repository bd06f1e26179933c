// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// run --graph-functions, record + report --graph and report --functions on
// graph_calls' known call tree: the function_graph layout (nesting,
// leaves on one line, a duration on each closing line), and the table's
// call counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "dprobe_run.h"

namespace dprobe::integration {
namespace {

struct GraphLine {
  std::string duration;  // "0.714 us", or empty
  std::string call;      // the FUNCTION CALLS column, indentation kept
};

// The lines of the graph, without the header, the CPU and the task.
std::vector<GraphLine> graph_lines(const std::string& text) {
  std::vector<GraphLine> lines;
  std::istringstream in(text);
  std::string line;
  const std::regex row(R"(^ \d+\) +\S+-\d+ +\| [ +!#*@$] ?( *[0-9.]+ us)? *\|  (.*)$)");
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, row)) {
      std::string duration = match[1].str();
      duration.erase(0, duration.find_first_not_of(' '));
      lines.push_back({duration, match[2].str()});
    }
  }
  return lines;
}

std::vector<std::string> calls_of(const std::vector<GraphLine>& lines) {
  std::vector<std::string> calls;
  for (const GraphLine& line : lines) calls.push_back(line.call);
  return calls;
}

const std::vector<std::string> kTwoRounds = {
    "top() {",      "  middle() {", "    leaf();", "    leaf();", "  }",
    "  middle() {", "    leaf();",  "    leaf();", "  }",         "}"};

TEST(FunctionGraph, RunPrintsTheCallTreeWithDurations) {
  const std::string prog = program("graph_calls_O2");
  const RunResult run =
      run_dprobe({"run", "--graph-functions", prog + ":top", "--graph-functions", prog + ":middle",
                  "--graph-functions", prog + ":leaf", "--", prog, "2"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("# tracer: function_graph\n")) << run;
  const std::vector<GraphLine> lines = graph_lines(run.out);
  ASSERT_EQ(calls_of(lines), kTwoRounds) << run;
  for (const GraphLine& line : lines) {
    // An opening line has no duration; a leaf and a closing brace have one.
    const bool opens = line.call.ends_with("{");
    EXPECT_EQ(line.duration.empty(), opens) << line.call << " " << line.duration;
  }
  // No trace line besides the graph.
  EXPECT_TRUE(parse_trace(run.out).empty()) << run;
}

TEST(FunctionGraph, ReportDrawsARecordingAndTablesItsFunctions) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string prog = program("graph_calls_O2");
  const std::string file = dir.file("calls.dat");
  const RunResult recorded =
      run_dprobe({"record", "-o", file, "--graph-functions", prog + ":top", "--graph-functions",
                  prog + ":middle", "--graph-functions", prog + ":leaf", "--", prog, "3"});
  ASSERT_EQ(recorded.status, 0) << recorded;
  const RunResult graph = run_dprobe({"report", "--graph", file});
  ASSERT_EQ(graph.status, 0) << graph;
  const std::vector<std::string> calls = calls_of(graph_lines(graph.out));
  ASSERT_EQ(calls.size(), 14u) << graph;
  EXPECT_EQ(calls.front(), "top() {");
  EXPECT_EQ(calls.back(), "}");
  const RunResult table = run_dprobe({"report", "--functions", file});
  ASSERT_EQ(table.status, 0) << table;
  // Total, self, calls, average, longest, function: the calls column.
  const std::regex row(R"(^ +[0-9.]+ +[a-z ]{2} +[0-9.]+ +[a-z ]{2} +(\d+) .* (\w+)$)");
  std::map<std::string, std::string> counts;
  std::istringstream in(table.out);
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, row)) counts[match[2].str()] = match[1].str();
  }
  EXPECT_EQ(counts,
            (std::map<std::string, std::string>{{"top", "1"}, {"middle", "3"}, {"leaf", "6"}}))
      << table;
  // The longest call comes first: top encloses the others.
  EXPECT_THAT(table.out, ::testing::ContainsRegex("=+\n +[0-9.]+ [a-z ]{2} .* top\n")) << table;
}

TEST(FunctionGraph, GraphAndJsonAreOneOrTheOther) {
  const std::string prog = program("graph_calls_O2");
  const RunResult run =
      run_dprobe({"run", "--json", "--graph-functions", prog + ":leaf", "--", prog});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, ::testing::HasSubstr("--json and --graph")) << run;
}

}  // namespace
}  // namespace dprobe::integration
