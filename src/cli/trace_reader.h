// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CLI's side of the trace memory: each pass drains every thread's ring,
// puts the records of the pass in time order, formats them (ftrace text or
// JSON lines) and writes them out. Rings of threads that exited are drained
// to the end and their slots given back for new threads.
//
//   TraceReader reader(memory, events, &symbolizer, OutputFormat::kText, stdout);
//   while (running) if (reader.poll() == 0) sleep_a_little();
//   reader.poll();  // the rest, after the program ends
#ifndef DPROBE_CLI_TRACE_READER_H_
#define DPROBE_CLI_TRACE_READER_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "trace/event.h"
#include "trace/formatter.h"
#include "trace/ring_buffer.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

enum class OutputFormat : uint8_t { kText, kJson };

// The lines of one drain pass, from one reader or from several (the
// processes of a trace), written out in time order: each ring is in order
// already, the pass puts the rings together.
class TracePass {
 public:
  std::string& text() { return text_; }
  // The line text()[begin, end) happened at `timestamp`.
  void add(uint64_t timestamp, size_t begin, size_t end) {
    lines_.push_back({timestamp, begin, end});
  }
  size_t size() const { return lines_.size(); }
  // Writes the lines in order (whole lines per write), then empties.
  void write(std::FILE* out);

 private:
  struct Line {
    uint64_t timestamp;
    size_t begin;
    size_t end;
  };
  std::string text_;
  std::vector<Line> lines_;
  std::string sorted_;
};

class TraceReader {
 public:
  TraceReader(const trace::TraceMemory& memory, const std::vector<trace::EventDesc>& events,
              const trace::Symbolizer* symbolizer, OutputFormat format, std::FILE* out);

  // One pass over all rings; returns the records written.
  size_t poll();
  // The same, the lines going into `pass` (written by the caller).
  size_t collect(TracePass& pass);

  // Records dropped: rings that were full, and hits that found no ring.
  uint64_t lost() const;
  // Problems met (a corrupt ring): reported once each, never fatal.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct Slot {
    uint32_t generation = 0;
    std::optional<trace::RingReader> reader;
    std::string comm;  // the thread's name at this point of its ring
  };
  void drain_slot(uint32_t index, TracePass& pass);
  void take(Slot& slot, const trace::RecordHeader* header, std::span<const std::byte> record,
            TracePass& pass);

  const trace::TraceMemory& memory_;
  std::vector<const trace::EventDesc*> events_by_id_;
  trace::TraceFormatter formatter_;
  OutputFormat format_;
  std::FILE* out_;
  std::vector<Slot> slots_;
  uint64_t lost_retired_ = 0;  // lost counts of rings already given back
  std::vector<std::string> problems_;
  TracePass pass_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_TRACE_READER_H_
