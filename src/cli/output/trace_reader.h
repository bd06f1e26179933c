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
#ifndef DPROBE_CLI_OUTPUT_TRACE_READER_H_
#define DPROBE_CLI_OUTPUT_TRACE_READER_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/process/namespace_ids.h"
#include "trace/event.h"
#include "trace/formatter.h"
#include "trace/hit/ring_buffer.h"
#include "trace/trace_file.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

// kRecord: the trace file's chunks (trace/trace_file.h), for `dprobe record`.
enum class OutputFormat : uint8_t { kText, kJson, kRecord };

// The lines of one drain pass, from one reader or from several (the
// processes of a trace), written out in time order: each ring is in order
// already, the pass puts the rings together.

class TracePass {
 public:
  std::string& text() { return text_; }
  // The line text()[begin, end) happened at `timestamp` (trace-clock ns).
  void add(uint64_t timestamp, size_t begin, size_t end) {
    lines_.push_back({timestamp, begin, end});
  }
  size_t size() const { return lines_.size(); }
  // Writes, in time order, the lines that happened up to `upto` (whole
  // lines per write) and keeps the later ones for the next pass: a ring
  // read early in this pass may still receive lines older than some read
  // later. Returns 0, or the errno of a write that failed (EPIPE: the
  // reader went away; ENOSPC: a full disk).
  int write(std::FILE* out, uint64_t upto = UINT64_MAX);
  // Empties without writing (the output failed before).
  void discard();

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

// A count the traced program can overwrite (events lost): believed only
// while it never goes back and never grows faster than one a nanosecond
// (no probe hit is that quick), else held at the last believable value and
// reported once.
class PlausibleCount {
 public:
  // Counting began no earlier than `since_ns` (0: unknown; then the first
  // look allows only the slack).
  explicit PlausibleCount(uint64_t since_ns = 0) : seen_ns_(since_ns) {}
  // `value` read at `now_ns` (steady clock); returns the count believed.
  uint64_t observe(uint64_t value, uint64_t now_ns);
  uint64_t value() const { return value_; }
  bool corrupt() const { return corrupt_; }

 private:
  static constexpr uint64_t kSlack = 1u << 20;  // what may be counted before the first look
  uint64_t value_ = 0;
  uint64_t seen_ns_ = 0;
  bool corrupt_ = false;
};

class TraceReader {
 public:
  // `also_record`: collect() can fill a second pass with the records' chunks
  // (run --perfetto), beside the lines of `format`.
  TraceReader(const trace::TraceMemory& memory, const std::vector<trace::EventDesc>& events,
              const trace::Symbolizer* symbolizer, OutputFormat format, std::FILE* out,
              bool also_record = false);

  // The process names its threads as its own PID namespace does: its
  // records show the host's ids, as the kernel's trace does.
  void use_host_ids(HostIds ids) { ids_.emplace(std::move(ids)); }

  // One pass over all rings; returns the records written.
  size_t poll();
  // The same, the lines going into `pass` (written by the caller), and with
  // `records` (also_record) each record's chunks into it too.
  size_t collect(TracePass& pass, TracePass* records = nullptr);
  // The records' chunks only (kRecord, `records`): symbols for addresses
  // the records showed bare and the symbolizer names now, refreshed: a
  // JIT's perf map the JVM wrote at its exit. For a process's end.
  void collect_late_symbols(TracePass& pass, TracePass* records = nullptr);

  // Records dropped because their thread's ring was full (--buffer-size).
  uint64_t lost_ring_full() const;
  // Hits dropped because every thread slot was taken (--max-threads).
  uint64_t lost_no_slot() const;
  uint32_t slot_count() const { return memory_.slot_count(); }
  // Hits of event `id`, the profile's: the threads count them in their
  // rings (trace::kRingCountedEvents), the rest in the shared counter.
  uint64_t hits(uint32_t id) const;
  // Its misses: nested hits and records that found the ring full.
  uint64_t misses(uint32_t id) const;
  // Hits of event `id` its filter turned away (--filter).
  uint64_t filtered(uint32_t id) const;
  // Problems met (a corrupt ring): reported once each, never fatal. The
  // trace memory lives in the traced program, which can scribble over it:
  // a ring that cannot be read on is given up, the others go on.
  std::vector<std::string> problems() const;

 private:
  static constexpr size_t kMaxProblems = 8;  // said in full; the rest counted
  struct Slot {
    uint32_t generation = 0;
    bool lost = false;  // corrupt at this generation: not read again
    std::optional<trace::RingReader> reader;
    PlausibleCount lost_count;  // the ring's lost count, as far as believable
    bool lost_said = false;     // its corruption was reported
    std::string comm;           // the thread's name at this point of its ring
    uint64_t last_ns = 0;       // its last record's time: the next is never earlier
  };
  uint64_t count(uint32_t id, const std::atomic<uint64_t>& shared,
                 const std::vector<uint64_t>& retired,
                 uint64_t (trace::RingReader::*in_ring)(uint32_t) const) const;
  uint64_t ring_lost(Slot& slot);
  void observe_slotless();
  void drain_slot(uint32_t index, TracePass& pass, TracePass* records);
  void lose(Slot& slot, std::string why);
  static void free_slot(trace::SlotState& state, uint32_t seen);
  void take(Slot& slot, const trace::RecordHeader* header, std::span<const std::byte> record,
            TracePass& pass, TracePass* records);
  // kRecord: the record's chunk, after the event format and the symbols
  // its text needs that this reader has not written before.
  uint64_t time_in_order(Slot& slot, const trace::RecordHeader& header) const;
  // The symbol chunks of what the symbol log learned since the last call.
  void append_symbol_chunks(std::string& out);
  void take_record(const trace::EventDesc& event, const trace::RecordHeader& header, uint64_t ns,
                   std::span<const std::byte> record, const std::string& comm, std::string& out);

  const trace::TraceMemory& memory_;
  std::vector<const trace::EventDesc*> events_by_id_;
  trace::SymbolLog symbol_log_;  // kRecord: what the records' text looked up
  trace::TraceFormatter formatter_;
  uint32_t stream_;                   // kRecord: this reader's stream in the file
  std::vector<bool> format_written_;  // kRecord: by event id
  std::string chunks_;                // the record's chunks, for each file that takes them
  std::string scratch_;
  std::optional<HostIds> ids_;
  std::string translated_;  // a record, its ids the host's
  OutputFormat format_;
  std::FILE* out_;
  std::vector<Slot> slots_;
  uint64_t lost_retired_ = 0;  // lost counts of rings already given back
  std::vector<uint64_t> retired_hits_ = std::vector<uint64_t>(trace::kRingCountedEvents);
  std::vector<uint64_t> retired_misses_ = std::vector<uint64_t>(trace::kRingCountedEvents);
  std::vector<uint64_t> retired_filtered_ = std::vector<uint64_t>(trace::kRingCountedEvents);
  uint64_t created_ns_;  // no count of this session's memory began before
  PlausibleCount slotless_;
  bool slotless_said_ = false;
  uint64_t lost_rings_ = 0;
  uint64_t corrupt_counts_ = 0;  // rings whose lost count was not believable
  std::vector<std::string> problems_;
  TracePass pass_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_TRACE_READER_H_
