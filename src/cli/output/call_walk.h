// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The records of a trace file as calls, thread by thread, for the views
// that show functions rather than events (report --graph, --functions).
// An entry record at a function's first instruction (or at an address no
// symbol names) opens a call on its thread, as does the first of a pair of
// events a runtime fires around its own calls (GRP/BASE__entry and
// GRP/BASE__return, or __start and __done: Python's function__entry and
// function__return, named by their `func`, `file` and `line` arguments); the return record of that
// function closes the innermost such call (the calls above it, left by longjmp or an exception, end
// unfinished); every other record is an event inside whatever is open.
//
//   struct Printer : CallVisitor { void step(const CallStep& s) override; };
//   Printer printer;
//   walk_calls(file, printer);
#ifndef DPROBE_CLI_OUTPUT_CALL_WALK_H_
#define DPROBE_CLI_OUTPUT_CALL_WALK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "trace/event.h"
#include "trace/formatter.h"
#include "trace/record.h"
#include "trace/trace_file.h"

namespace dprobe::cli {

struct CallStep {
  enum class Kind : uint8_t {
    kEnter,       // a call begins
    kReturn,      // the innermost call of its function returns
    kUnfinished,  // a call no return record ended (unwound past, or still running)
    kEvent,       // any other record
  };
  Kind kind = Kind::kEvent;
  const trace::EventDesc* event = nullptr;
  const trace::FileRecord* record = nullptr;  // the step's own record (kUnfinished: its entry's)
  trace::RecordHeader header{};               // of `record`
  std::string_view function;                  // the function's name (kEnter, kReturn, kUnfinished)
  size_t depth = 0;                           // calls open under it on its thread
  // kReturn: nanoseconds from its entry; a return whose entry was never
  // recorded takes the entry time its own record keeps, and has_duration
  // is false where it keeps none.
  uint64_t duration = 0;
  bool has_duration = false;
  bool entered = false;  // kReturn: an entry record opened it
  // A runtime's own call (a pair of SDT events: python's function__entry
  // and function__return), named as the runtime names it, "slow
  // (/app.py:2)", not a machine function.
  bool runtime_call = false;
};

class CallVisitor {
 public:
  virtual ~CallVisitor() = default;
  virtual void step(const CallStep& step) = 0;
};

// A record's trace line, as `report` prints it, by the formatter of its
// stream (made once per stream).
class RecordText {
 public:
  explicit RecordText(const trace::TraceFileContents& file) : file_(file) {}
  std::string line(const trace::EventDesc& event, const trace::FileRecord& record);

 private:
  const trace::TraceFileContents& file_;
  std::map<uint32_t, std::pair<std::unique_ptr<trace::FileSymbolizer>,
                               std::unique_ptr<trace::TraceFormatter>>>
      formatters_;
};

// Visits every record of `file` once, in file (time) order, then the calls
// still open at the end (kUnfinished), innermost first.
void walk_calls(const trace::TraceFileContents& file, CallVisitor& visitor);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_CALL_WALK_H_
