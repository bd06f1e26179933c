// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/function_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "cli/output/call_walk.h"

namespace dprobe::cli {
namespace {

using Kind = CallStep::Kind;

struct FunctionTimes {
  uint64_t total = 0;
  uint64_t self = 0;
  uint64_t calls = 0;
  uint64_t longest = 0;
};

class TableBuilder : public CallVisitor {
 public:
  void step(const CallStep& step) override {
    std::vector<uint64_t>& inside = inside_[step.header.tid];  // callees' time, per open call
    switch (step.kind) {
      case Kind::kEnter:
        inside.push_back(0);
        return;
      case Kind::kUnfinished:
        if (!inside.empty()) inside.pop_back();
        return;
      case Kind::kEvent:
        return;
      case Kind::kReturn:
        break;
    }
    uint64_t callees = 0;
    if (step.entered && !inside.empty()) {
      callees = inside.back();
      inside.pop_back();
    }
    if (!step.has_duration) return;
    FunctionTimes& times = functions_[std::string(step.function)];
    times.calls += 1;
    times.total += step.duration;
    times.self += step.duration > callees ? step.duration - callees : 0;
    times.longest = std::max(times.longest, step.duration);
    if (!inside.empty()) inside.back() += step.duration;
  }

  std::string finish() const {
    std::vector<std::pair<std::string, FunctionTimes>> rows(functions_.begin(), functions_.end());
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    std::string out =
        "  Total time   Self time       Calls    Avg time    Max time  Function\n"
        "  ==========  ==========  ==========  ==========  ==========  ====================\n";
    for (const auto& [name, times] : rows) {
      out += fmt::format("  {}  {}  {:>10}  {}  {}  {}\n", table_time(times.total),
                         table_time(times.self), times.calls, table_time(times.total / times.calls),
                         table_time(times.longest), name);
    }
    return out;
  }

 private:
  std::map<uint32_t, std::vector<uint64_t>> inside_;  // by thread
  std::map<std::string, FunctionTimes> functions_;
};

}  // namespace

std::string table_time(uint64_t ns) {
  constexpr const char* kUnits[] = {"ns", "us", "ms", " s"};
  double value = static_cast<double>(ns);
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && value >= 1000.0) {
    value /= 1000.0;
    ++unit;
  }
  return fmt::format("{:7.3f} {}", value, kUnits[unit]);
}

std::string function_table(const trace::TraceFileContents& file) {
  TableBuilder builder;
  walk_calls(file, builder);
  return builder.finish();
}

}  // namespace dprobe::cli
