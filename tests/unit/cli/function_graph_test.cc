// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// report --graph and --functions on trace files made here, record by
// record: the function_graph layout of the kernel's documentation
// (Documentation/trace/ftrace.rst: durations, overhead marks, leaves on
// one line, nesting, thread switches, other events as comments), and the
// per-function table's totals and self times to the nanosecond.
#include "cli/output/function_graph.h"

#include <gtest/gtest.h>

#include <string>

#include "cli/output/function_table.h"
#include "trace/record.h"

namespace dprobe::cli {
namespace {

constexpr uint16_t kEntry = 1;
constexpr uint16_t kReturn = 2;
constexpr uint16_t kMark = 3;
constexpr uint64_t kTop = 0x1000;
constexpr uint64_t kMiddle = 0x2000;
constexpr uint64_t kLeaf = 0x3000;

// Entries and returns of any function (their ip fields say which), and one
// event of another kind, in one stream.
class FileBuilder {
 public:
  FileBuilder() {
    trace::EventDesc entry;
    entry.id = kEntry;
    entry.group = "g";
    entry.name = "enter";
    trace::layout_event(entry);
    trace::EventDesc exit = entry;
    exit.id = kReturn;
    exit.name = "leave";
    exit.is_return = true;
    trace::layout_event(exit);
    trace::EventDesc mark = entry;
    mark.id = kMark;
    mark.name = "mark";
    file_.events[{0, kEntry}] = entry;
    file_.events[{0, kReturn}] = exit;
    file_.events[{0, kMark}] = mark;
    for (const auto& [address, name] :
         {std::pair{kTop, "top"}, std::pair{kMiddle, "middle"}, std::pair{kLeaf, "leaf"}}) {
      file_.symbols[{0, address}] = {name, 0, 16, "prog"};
    }
    file_.symbols[{0, kMiddle + 4}] = {"middle", 4, 16, "prog"};
  }

  FileBuilder& enter(uint32_t tid, uint64_t function, uint64_t ns) {
    return add(kEntry, tid, function, ns);
  }
  FileBuilder& leave(uint32_t tid, uint64_t function, uint64_t ns) {
    return add(kReturn, tid, function, ns);
  }
  FileBuilder& mark(uint32_t tid, uint64_t ip, uint64_t ns) { return add(kMark, tid, ip, ns); }

  const trace::TraceFileContents& file() const { return file_; }

 private:
  FileBuilder& add(uint16_t type, uint32_t tid, uint64_t address, uint64_t ns) {
    const trace::EventDesc& event = file_.events.at({0, type});
    std::string bytes(event.fixed_size, '\0');
    trace::store_field(
        bytes.data(), 0,
        trace::RecordHeader{type, static_cast<uint16_t>(bytes.size()), 1, 100, tid, ns});
    const uint32_t at =
        event.is_return ? trace::EventDesc::kFuncOffset : trace::EventDesc::kIpOffset;
    trace::store_field(bytes.data(), at, address);
    file_.records.push_back({0, 0, tid == 100 ? "prog" : "worker", std::move(bytes)});
    return *this;
  }

  trace::TraceFileContents file_;
};

constexpr const char* kHeader =
    "# tracer: function_graph\n"
    "#\n"
    "# CPU  TASK/PID         DURATION                  FUNCTION CALLS\n"
    "# |     |    |           |   |                     |   |   |   |\n";

TEST(FunctionGraph, NestsCallsAndPrintsLeavesOnOneLine) {
  FileBuilder b;
  b.enter(100, kTop, 1000)
      .enter(100, kMiddle, 2000)
      .enter(100, kLeaf, 3000)
      .leave(100, kLeaf, 3714)
      .mark(100, kMiddle + 4, 4000)
      .leave(100, kMiddle, 14208)
      .leave(100, kTop, 120000);
  EXPECT_EQ(function_graph(b.file()),
            std::string(kHeader) +
                " 1)    prog-100    |               |  top() {\n"
                " 1)    prog-100    |               |    middle() {\n"
                " 1)    prog-100    |   0.714 us    |      leaf();\n"
                " 1)    prog-100    |               |      /* mark: (middle+0x4/0x10) */\n"
                " 1)    prog-100    | + 12.208 us   |    }\n"
                " 1)    prog-100    | ! 119.000 us  |  }\n");
}

TEST(FunctionGraph, AnotherThreadsLineFollowsAMarker) {
  FileBuilder b;
  b.enter(100, kTop, 1000).enter(101, kLeaf, 1500).leave(101, kLeaf, 2500).leave(100, kTop, 3000);
  EXPECT_EQ(function_graph(b.file()), std::string(kHeader) +
                                          " 1)    prog-100    |               |  top() {\n"
                                          " ------------------------------------------\n"
                                          " 1)    prog-100    =>   worker-101  \n"
                                          " ------------------------------------------\n"
                                          "\n"
                                          " 1)   worker-101   |   1.000 us    |  leaf();\n"
                                          " ------------------------------------------\n"
                                          " 1)   worker-101   =>    prog-100   \n"
                                          " ------------------------------------------\n"
                                          "\n"
                                          " 1)    prog-100    |   2.000 us    |  }\n");
}

TEST(FunctionGraph, CallsLeftUnwoundAndStillRunningKeepTheirOpening) {
  FileBuilder b;
  // middle and leaf are left by a longjmp to top, which returns; called
  // again, they return; the last leaf never does.
  b.enter(100, kTop, 1000)
      .enter(100, kMiddle, 2000)
      .enter(100, kLeaf, 2500)
      .leave(100, kTop, 5000)
      .enter(100, kMiddle, 6000)
      .enter(100, kLeaf, 6500)
      .leave(100, kLeaf, 6600)
      .leave(100, kMiddle, 7000)
      .enter(100, kLeaf, 8000);
  EXPECT_EQ(function_graph(b.file()), std::string(kHeader) +
                                          " 1)    prog-100    |               |  top() {\n"
                                          " 1)    prog-100    |               |    middle() {\n"
                                          " 1)    prog-100    |               |      leaf() {\n"
                                          " 1)    prog-100    |   4.000 us    |  }\n"
                                          " 1)    prog-100    |               |  middle() {\n"
                                          " 1)    prog-100    |   0.100 us    |    leaf();\n"
                                          " 1)    prog-100    |   1.000 us    |  }\n"
                                          " 1)    prog-100    |               |  leaf() {\n");
}

// An entry probe with no return probe on its function (`p malloc`) is an
// event, not a call that never ends; of two entry probes on one function,
// one opens the call.
TEST(FunctionGraph, EntriesThatNothingClosesAreEvents) {
  FileBuilder b;
  b.enter(100, kTop, 1000)
      .enter(100, kMiddle, 2000)
      .enter(100, kMiddle, 3000)
      .leave(100, kTop, 4000);
  EXPECT_EQ(function_graph(b.file()),
            std::string(kHeader) +
                " 1)    prog-100    |               |  top() {\n"
                " 1)    prog-100    |               |    /* enter: (middle+0x0/0x10) */\n"
                " 1)    prog-100    |               |    /* enter: (middle+0x0/0x10) */\n"
                " 1)    prog-100    |   3.000 us    |  }\n");
}

TEST(FunctionGraph, DurationsAsFtracePrintsThem) {
  EXPECT_EQ(graph_duration(1382), "  1.382 us    |  ");
  EXPECT_EQ(graph_duration(10215), "+ 10.215 us   |  ");
  EXPECT_EQ(graph_duration(109485), "! 109.485 us  |  ");
  EXPECT_EQ(graph_duration(1234567), "# 1234.567 us |  ");
  EXPECT_EQ(graph_duration(12345678), "* 12345.67 us |  ");
  EXPECT_EQ(graph_duration(123456789), "@ 123456.7 us |  ");
  EXPECT_EQ(graph_duration(2000000000), "$ 2000000 us  |  ");
  EXPECT_EQ(graph_duration(0), "  0.000 us    |  ");
}

TEST(FunctionTable, TotalsSelfTimesAndCallsPerFunction) {
  FileBuilder b;
  // top (100 us) calls middle twice (30 us, 20 us); the first middle calls
  // leaf (10 us); another thread's leaf takes 5 us.
  b.enter(100, kTop, 0)
      .enter(100, kMiddle, 1000)
      .enter(100, kLeaf, 2000)
      .enter(101, kLeaf, 2500)
      .leave(101, kLeaf, 7500)
      .leave(100, kLeaf, 12000)
      .leave(100, kMiddle, 31000)
      .enter(100, kMiddle, 40000)
      .leave(100, kMiddle, 60000)
      .leave(100, kTop, 100000);
  EXPECT_EQ(function_table(b.file()),
            "  Total time   Self time       Calls    Avg time    Max time  Function\n"
            "  ==========  ==========  ==========  ==========  ==========  ====================\n"
            "  100.000 us   50.000 us           1  100.000 us  100.000 us  top\n"
            "   50.000 us   40.000 us           2   25.000 us   30.000 us  middle\n"
            "   15.000 us   15.000 us           2    7.500 us   10.000 us  leaf\n");
}

TEST(FunctionTable, TimesInTheUnitThatKeepsThemUnderAThousand) {
  EXPECT_EQ(table_time(197), "197.000 ns");
  EXPECT_EQ(table_time(1234), "  1.234 us");
  EXPECT_EQ(table_time(19600000), " 19.600 ms");
  EXPECT_EQ(table_time(3000000000), "  3.000  s");
}

}  // namespace
}  // namespace dprobe::cli
