// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/function_graph.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "cli/output/call_walk.h"
#include "trace/formatter.h"

namespace dprobe::cli {
namespace {

using Kind = CallStep::Kind;

// The task cell: COMM-TID (COMM cut to 7 characters), centred in 14 (the
// kernel's TRACE_GRAPH_PROCINFO_LENGTH; with its " | " the header's 17).
std::string task_cell(std::string_view comm, uint32_t tid) {
  constexpr size_t kCell = 14;
  const std::string text = fmt::format("{}-{}", comm.substr(0, 7), tid);
  const size_t spaces = text.size() < kCell ? kCell - text.size() : 0;
  return std::string(spaces / 2, ' ') + text + std::string(spaces - spaces / 2, ' ');
}

// `func();`, `func() {`: a runtime's call keeps the name it has.
std::string call_suffix(const CallStep& step, std::string_view end) {
  return (step.runtime_call ? "" : "()") + std::string(end);
}

char overhead_mark(uint64_t ns) {
  constexpr struct {
    uint64_t over;
    char mark;
  } kMarks[] = {{1000000000, '$'}, {100000000, '@'}, {10000000, '*'},
                {1000000, '#'},    {100000, '!'},    {10000, '+'}};
  for (const auto& [over, mark] : kMarks) {
    if (ns > over) return mark;
  }
  return ' ';
}

// An entry not printed yet: it is a leaf when the very next record is its
// return (as ftrace looks at the next event of the ring), else it opens.
struct Pending {
  CallStep step;
  std::string name;
};

class GraphWriter : public CallVisitor {
 public:
  GraphWriter(const trace::TraceFileContents& file, int cpu_width)
      : cpu_width_(cpu_width), text_(file) {
    out_ +=
        "# tracer: function_graph\n"
        "#\n"
        "# CPU  TASK/PID         DURATION                  FUNCTION CALLS\n"
        "# |     |    |           |   |                     |   |   |   |\n";
  }

  void step(const CallStep& step) override {
    std::optional<Pending>& pending = pending_;
    if (step.kind == Kind::kReturn && pending && step.entered &&
        pending->step.header.tid == step.header.tid && pending->step.depth == step.depth) {
      line(step, graph_duration(step.duration), step.depth,
           pending->name + call_suffix(pending->step, ";"));
      pending.reset();
      return;
    }
    flush(pending);
    switch (step.kind) {
      case Kind::kEnter:
        pending = Pending{step, std::string(step.function)};
        return;
      case Kind::kReturn:
        line(step, step.has_duration ? graph_duration(step.duration) : kNoDuration, step.depth,
             step.entered ? std::string("}") : std::string(step.function) + call_suffix(step, ";"));
        return;
      case Kind::kUnfinished:
        return;  // its `{` is printed; no `}` without a return
      case Kind::kEvent:
        line(step, kNoDuration, step.depth, "/* " + event_text(step) + " */");
        return;
    }
  }

  std::string finish() {
    flush(pending_);
    return std::move(out_);
  }

 private:
  static constexpr std::string_view kNoDuration = "              |  ";

  void flush(std::optional<Pending>& pending) {
    if (!pending) return;
    line(pending->step, kNoDuration, pending->step.depth,
         pending->name + call_suffix(pending->step, " {"));
    pending.reset();
  }

  std::string cpu_cell(uint32_t cpu) const { return fmt::format(" {:>{}}) ", cpu, cpu_width_); }

  void line(const CallStep& step, std::string_view duration, size_t depth,
            const std::string& text) {
    const uint32_t tid = step.header.tid;
    const std::string task = task_cell(step.record->comm, tid);
    if (last_tid_ && *last_tid_ != tid) {
      out_ += " ------------------------------------------\n" + cpu_cell(step.header.cpu) +
              last_task_ + " => " + task + "\n ------------------------------------------\n\n";
    }
    last_tid_ = tid;
    last_task_ = task;
    out_ += cpu_cell(step.header.cpu) + task + " | " + std::string(duration) +
            std::string(depth * 2, ' ') + text + "\n";
  }

  // "EVENT: (LOCATION) ARGS" of the record's trace line.
  std::string event_text(const CallStep& step) {
    std::string text = text_.line(*step.event, *step.record);
    const size_t bracket = text.find("] ");
    const size_t colon = text.find(": ", bracket == std::string::npos ? 0 : bracket);
    if (colon != std::string::npos) text.erase(0, colon + 2);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  int cpu_width_;
  std::string out_;
  std::optional<Pending> pending_;
  std::optional<uint32_t> last_tid_;
  std::string last_task_;
  RecordText text_;
};

// The digits of the highest CPU in the file: the width ftrace gives the
// CPU column.
int cpu_width(const trace::TraceFileContents& file) {
  uint32_t highest = 0;
  for (const trace::FileRecord& record : file.records) {
    if (record.bytes.size() < sizeof(trace::RecordHeader)) continue;
    highest = std::max(highest, trace::load_field<trace::RecordHeader>(record.bytes.data(), 0).cpu);
  }
  return static_cast<int>(std::to_string(highest).size());
}

}  // namespace

std::string graph_duration(uint64_t ns) {
  std::string text = fmt::format("{} ", overhead_mark(ns));
  const std::string micros = std::to_string(ns / 1000);
  text += micros;
  size_t length = micros.size();
  // Seven digits at most, as ftrace prints them.
  if (length < 7) {
    const std::string nanos = fmt::format("{:03}", ns % 1000).substr(0, 7 - length);
    text += "." + nanos;
    length += nanos.size() + 1;
  }
  text += " us ";
  if (length < 8) text += std::string(8 - length, ' ');
  return text + "|  ";
}

std::string function_graph(const trace::TraceFileContents& file) {
  GraphWriter writer(file, cpu_width(file));
  walk_calls(file, writer);
  return writer.finish();
}

}  // namespace dprobe::cli
